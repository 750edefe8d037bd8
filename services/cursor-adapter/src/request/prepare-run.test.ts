import { describe, expect, it } from "vitest";
import { create } from "@bufbuild/protobuf";
import { parseMemberId, parseRunId } from "@byok/contracts";
import { agent } from "@byok/cursor-protocol";
import { parseGatewayConfig, silentLogger } from "@byok/platform";
import { blobIdOf, blobKey } from "../checkpoint/blob-id.ts";
import { KvError, type KvChannel } from "../checkpoint/kv-channel.ts";
import { PromptAssets } from "../prompting/prompt-assets.ts";
import { DEFAULT_PROMPT_DIR } from "../tools/catalog.ts";
import { HistoryMemory } from "./history-memory.ts";
import { prepareRun } from "./prepare-run.ts";

const models = parseGatewayConfig(
  {
    providers: { main: { kind: "anthropic", baseUrl: "https://llm.invalid", apiKeyEnv: "TEST_KEY" } },
    models: [{ id: "sonnet-test", displayName: "Sonnet Test", provider: "main", upstreamModel: "claude-x", contextWindow: 200000 }],
  },
  "prepare-run test",
).models;
const prompts = new PromptAssets(DEFAULT_PROMPT_DIR);
const log = silentLogger();
const encoder = new TextEncoder();

/** The client's blobs, the store's (none at first), and what each import and fetch asked for. */
class World {
  readonly client = new Map<string, Uint8Array>();
  readonly stored = new Map<string, Uint8Array>();
  readonly imports: Array<{ messages: number; baseRevisionId: string | undefined }> = [];
  kvGets = 0;
  readonly memory = new HistoryMemory();

  root(json: object): Uint8Array {
    const bytes = encoder.encode(JSON.stringify(json));
    const id = blobIdOf(bytes);
    this.client.set(blobKey(id), bytes);
    return id;
  }

  async turn(conversationId: string, roots: Uint8Array[], text: string): Promise<void> {
    const kv = {
      get: async (id: Uint8Array) => {
        this.kvGets++;
        const bytes = this.client.get(blobKey(id));
        if (bytes === undefined) throw new KvError("client_error", "blob not found");
        return bytes;
      },
    } as unknown as KvChannel;
    await prepareRun({
      runId: parseRunId(crypto.randomUUID()),
      memberId: parseMemberId("member-a"),
      runRequest: create(agent.AgentRunRequestSchema, {
        conversationId,
        conversationState: { rootPromptMessagesJson: roots },
        requestedModel: { modelId: "sonnet-test" },
        action: { action: { case: "userMessageAction", value: { userMessage: { text, messageId: text, mode: agent.AgentMode.AGENT } } } },
      }),
      headers: {},
      models,
      web: { fetchEnabled: false, searchEnabled: false },
      prompts,
      blobSources: {
        conversationId,
        prefetched: new Map(),
        store: {
          getBlobs: async (ids: readonly Uint8Array[]) => new Map(ids.flatMap((id) => (this.stored.has(blobKey(id)) ? [[blobKey(id), this.stored.get(blobKey(id))!]] : []))),
          putBlobs: async (blobs: readonly Uint8Array[]) => {
            for (const bytes of blobs) this.stored.set(blobKey(blobIdOf(bytes)), bytes);
          },
        },
        kv,
        log,
      },
      store: {
        importHistory: async (request: { messages: readonly unknown[]; baseRevisionId?: string }) => {
          this.imports.push({ messages: request.messages.length, baseRevisionId: request.baseRevisionId });
          return `rev-${this.imports.length}`;
        },
      },
      history: this.memory,
      log,
    });
  }
}

const conversationId = "7f0f6a53-0c43-4c5e-9a57-2d2f3e8e2f10";

describe("prepareRun: importing the client's history", () => {
  it("imports only the new roots when a system root now stands in front of the remembered ones", async () => {
    const world = new World();
    const history = Array.from({ length: 6 }, (_, i) => world.root({ role: i % 2 === 0 ? "user" : "assistant", id: `m${i}`, content: `message ${i}` }));
    // Turn 1: a checkpoint without a system root, all of it from the client.
    await world.turn(conversationId, history, "first");
    expect(world.imports.at(-1)).toEqual({ messages: 6, baseRevisionId: undefined });
    expect(world.kvGets).toBe(6);

    // Turn 2: the gateway's checkpoint puts its system root first and adds two roots.
    const system = world.root({ role: "system", content: "You are the agent." });
    const added = [world.root({ role: "user", id: "u1", content: "first" }), world.root({ role: "assistant", id: "a1", content: "done" })];
    await world.turn(conversationId, [system, ...history, ...added], "second");
    expect(world.imports.at(-1)).toEqual({ messages: 2, baseRevisionId: "rev-1" });

    // Turn 3: another system text (mode or model changed): still only what is new.
    const otherSystem = world.root({ role: "system", content: "You are the planner." });
    const more = world.root({ role: "user", id: "u2", content: "second" });
    await world.turn(conversationId, [otherSystem, ...history, ...added, more], "third");
    expect(world.imports.at(-1)).toEqual({ messages: 1, baseRevisionId: "rev-2" });
  });

  it("imports the whole history when the root in front of the remembered ones is not a system root", async () => {
    const world = new World();
    const history = Array.from({ length: 4 }, (_, i) => world.root({ role: i % 2 === 0 ? "user" : "assistant", id: `m${i}`, content: `message ${i}` }));
    await world.turn(conversationId, history, "first");
    const earlier = world.root({ role: "user", id: "m-1", content: "an earlier message" });
    await world.turn(conversationId, [earlier, ...history], "second");
    expect(world.imports.at(-1)).toEqual({ messages: 5, baseRevisionId: undefined });
  });
});
