/**
 * StoreClient against a real store (own Postgres database, own bus prefix):
 * results come back as values, refusals as the StoreFailure kinds callers act
 * on, and a store that is gone as `unavailable`.
 */
import { createHash } from "node:crypto";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { busNames, parseConversationId, parseMemberId, parseRunId, RunStatus, UserOrigin, type MessageSchema } from "@byok/contracts";
import { silentLogger } from "@byok/platform";
import { loadConfig, startStore, type RunningStore } from "@byok/store";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { createTestBus, createTestDatabase, type TestBus, type TestDatabase } from "@byok/test-support/infra";
import { StoreClient } from "./store-client.ts";
import { StoreFailure, type StoreFailureKind } from "./store-failure.ts";

function userText(text: string): MessageInitShape<typeof MessageSchema> {
  return { body: { case: "user", value: { clientId: "", origin: UserOrigin.USER, content: [{ part: { case: "text", value: { text } } }] } } };
}

async function failureKind(call: Promise<unknown>): Promise<StoreFailureKind | "no failure"> {
  try {
    await call;
    return "no failure";
  } catch (error) {
    if (error instanceof StoreFailure) return error.kind;
    throw error;
  }
}

describe("StoreClient with the store", () => {
  let database: TestDatabase;
  let bus: TestBus;
  let store: RunningStore | undefined;
  let nc: NatsConnection;
  let client: StoreClient;

  beforeEach(async () => {
    database = await createTestDatabase();
    bus = createTestBus();
    store = await startStore(loadConfig({ DATABASE_URL: database.url, NATS_URL: bus.natsUrl, BUS_PREFIX: bus.prefix, DATABASE_POOL_SIZE: "2" }), { log: silentLogger() });
    nc = await connect({ servers: bus.natsUrl });
    client = new StoreClient(nc, busNames(bus.prefix), { timeoutMs: 5_000 });
  });

  afterEach(async () => {
    await nc.close();
    await store?.stop();
    await bus.cleanup();
    await database.drop();
  });

  it("imports a history, runs a run on it and reads it back", async () => {
    const conversationId = parseConversationId("conv-1");
    const alice = parseMemberId("alice");
    const runId = parseRunId("run-1");
    const base = await client.importHistory({ conversationId, memberId: alice, messages: [userText("earlier")] });
    expect(base).not.toBe("");

    const begun = await client.beginRun({ runId, conversationId, memberId: alice, baseRevisionId: base, initialMessages: [userText("now")] });
    expect(begun).toMatchObject({ supersededRunId: "", run: { runId: "run-1", status: RunStatus.RUNNING, beginCount: 1 } });
    expect((await client.revisionMessages(begun.run.headRevisionId)).map((m) => m.body.case)).toEqual(["user", "user"]);

    const finished = await client.finishRun({ runId, status: RunStatus.COMPLETED });
    expect(finished.status).toBe(RunStatus.COMPLETED);
    expect((await client.getRun(runId)).status).toBe(RunStatus.COMPLETED);

    const unknown = parseRunId("run-unknown");
    expect(await client.findRun(unknown)).toBeUndefined();
    expect(await failureKind(client.getRun(unknown))).toBe("not_found");
  });

  it("refuses another member's conversation as forbidden and a superseded run's append as not_active", async () => {
    const conversationId = parseConversationId("conv-2");
    await client.importHistory({ conversationId, memberId: parseMemberId("alice"), messages: [userText("mine")] });
    expect(await failureKind(client.importHistory({ conversationId, memberId: parseMemberId("bob"), messages: [userText("mine")] }))).toBe("forbidden");

    const first = await client.beginRun({ runId: "run-a", conversationId, memberId: "alice", initialMessages: [userText("one")] });
    const second = await client.beginRun({ runId: "run-b", conversationId, memberId: "alice", initialMessages: [userText("two")] });
    expect(second.supersededRunId).toBe("run-a");
    const append = client.appendMessages({ runId: "run-a", expectedHeadRevisionId: first.run.headRevisionId, messages: [userText("late")] });
    expect(await failureKind(append)).toBe("not_active");
  });

  it("keeps blobs by their SHA-256 and members by their key", async () => {
    const data = new TextEncoder().encode("blob bytes");
    const id = await client.putBlob(data);
    expect(Buffer.from(id).toString("hex")).toBe(createHash("sha256").update(data).digest("hex"));
    const found = await client.getBlobs([id, new Uint8Array(32)]);
    expect([...found].map(([key, bytes]) => [key, new TextDecoder().decode(bytes)])).toEqual([[Buffer.from(id).toString("hex"), "blob bytes"]]);

    const { member, key } = await client.createMember("carol");
    expect(await client.verifyMemberKey(key)).toMatchObject({ memberId: member.memberId, name: "carol", teamId: member.teamId });
    await client.revokeMember(member.memberId);
    expect(await failureKind(client.verifyMemberKey(key))).toBe("not_found");
    expect((await client.listMembers(true)).map((m) => m.name)).toEqual(["carol"]);
    expect(await failureKind(client.memberUsage({ memberId: "", since: "yesterday", until: "" }))).toBe("invalid");
  });

  it("reports a store that is not running as unavailable", async () => {
    await store?.stop();
    store = undefined;
    expect(await failureKind(client.getRun(parseRunId("run-1")))).toBe("unavailable");
  });
});
