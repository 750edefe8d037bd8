/**
 * Cursor's model list per member: the adapter's real HTTP server, with the
 * member policy answered by a fake store. A member of a team with an allow
 * list sees only those models; a member whose team allows all, or the local
 * member, sees every model; a store that fails shows the last known list.
 */
import { afterEach, describe, expect, it } from "vitest";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { MemberPolicySchema, type MemberPolicy } from "@byok/contracts";
import { agent, aiserver } from "@byok/cursor-protocol";
import { parseGatewayConfig, silentLogger } from "@byok/platform";
import { StoreFailure } from "@byok/store-client";
import type { AdapterServer } from "../connect/http-server.ts";
import { startStubAdapterServer } from "../connect/testing/stub-adapter-server.ts";
import { postUnary } from "../connect/testing/wire-client.ts";
import { teamModels } from "./member-models.ts";

const { models } = parseGatewayConfig(
  {
    providers: { openai: { kind: "openai-chat", baseUrl: "https://api.openai.com/v1", apiKeyEnv: "OPENAI_API_KEY" } },
    models: [
      { id: "team-mini", displayName: "Mini", provider: "openai", upstreamModel: "gpt-4o-mini" },
      { id: "team-big", displayName: "Big", provider: "openai", upstreamModel: "gpt-4o" },
    ],
  },
  "test",
);

let server: AdapterServer | undefined;
afterEach(async () => {
  await server?.stop();
  server = undefined;
});

async function listFor(memberId: string | undefined): Promise<{ picker: string[]; usable: string[] }> {
  const headers: Record<string, string> = memberId === undefined ? {} : { "x-byok-member-id": memberId };
  const picker = await postUnary(server!.url, "/aiserver.v1.AiService/AvailableModels", toBinary(aiserver.AvailableModelsRequestSchema, create(aiserver.AvailableModelsRequestSchema)), { headers });
  const usable = await postUnary(server!.url, "/agent.v1.AgentService/GetUsableModels", toBinary(agent.GetUsableModelsRequestSchema, create(agent.GetUsableModelsRequestSchema)), { headers });
  return {
    picker: fromBinary(aiserver.AvailableModelsResponseSchema, picker.body).models.map((m) => m.name),
    usable: fromBinary(agent.GetUsableModelsResponseSchema, usable.body).models.map((m) => m.modelId),
  };
}

describe("model list per member", () => {
  it("shows a member only the models its team allows, and every model where the team has no list", async () => {
    const asked: string[] = [];
    const policies: Record<string, MemberPolicy> = {
      alice: create(MemberPolicySchema, { memberId: "alice", teamId: "t1", allowedModels: { modelIds: ["team-mini"] } }),
      bob: create(MemberPolicySchema, { memberId: "bob", teamId: "t2" }),
      local: create(MemberPolicySchema, { memberId: "local", teamId: "t2" }),
    };
    const store = {
      memberPolicy: (memberId: string) => {
        asked.push(memberId);
        const policy = policies[memberId];
        return policy ? Promise.resolve(policy) : Promise.reject(new StoreFailure("unavailable", "member.policy", "down"));
      },
    };
    ({ server } = await startStubAdapterServer({ memberModels: teamModels(models, store, { ttlMs: 60_000, log: silentLogger() }) }));

    expect(await listFor("alice")).toEqual({ picker: ["team-mini"], usable: ["team-mini"] });
    expect(await listFor("bob")).toEqual({ picker: ["team-mini", "team-big"], usable: ["team-mini", "team-big"] });
    expect(await listFor(undefined)).toEqual({ picker: ["team-mini", "team-big"], usable: ["team-mini", "team-big"] });
    // Cached: alice's policy was read once for both calls.
    expect(asked.filter((m) => m === "alice")).toHaveLength(1);
    // A store that cannot answer and no known list: every model (the gateway's accounting still refuses the others).
    expect((await listFor("carol")).picker).toEqual(["team-mini", "team-big"]);
  });
});
