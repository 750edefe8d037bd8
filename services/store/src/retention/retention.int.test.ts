/**
 * Audit log and retention against a real store: every admin action and run
 * start leaves one audit row written with it; retention deletes a team's
 * conversation content older than its retention_days (and only blobs no
 * other conversation uses), keeps runs, ledger and audit, and the next
 * import of that history is a fresh one. The Cursor end of it:
 * tests/retention.test.ts.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createHash } from "node:crypto";
import { RunStatus, StoreErrorKind, UserOrigin } from "@byok/contracts";
import { assistantText, startTestStore, userText, type TestStore } from "../store-test-harness.ts";

const DAY = 86_400_000;

describe("audit log and retention", () => {
  let store: TestStore;
  let now: number;
  beforeEach(async () => {
    now = Date.now();
    store = await startTestStore({ now: () => new Date(now) });
  });
  afterEach(() => store.close());

  async function audit(prefix = ""): Promise<Array<{ action: string; actor: string; memberId: string; details: Record<string, unknown> }>> {
    const { entries, error } = await store.call("listAudit", { actionPrefix: prefix, limit: 1000 });
    expect(error).toBeUndefined();
    return entries.reverse().map((e) => ({ action: e.action, actor: e.actor, memberId: e.memberId, details: JSON.parse(e.detailsJson) as Record<string, unknown> }));
  }

  it("records each admin action and run start once, in the action's own transaction, and refuses to rewrite the log", async () => {
    const team = (await store.call("createTeam", { name: "platform" })).team!;
    const created = await store.call("createMember", { name: "alice", teamId: team.teamId });
    const memberId = created.member!.memberId;
    const extra = await store.call("createMemberKey", { memberId, label: "laptop" });
    await store.call("rotateMemberKey", { keyId: extra.key!.keyId });
    await store.call("revokeMemberKey", { keyId: created.keyId });
    await store.call("revokeMemberKey", { keyId: created.keyId }); // idempotent: no second row
    await store.call("updateTeam", { teamId: team.teamId, name: "platform", retentionDays: 30 });
    await store.call("setBudget", { scope: 1, memberId, period: 3, limitUsd: "5" });
    await store.call("setBudget", { scope: 1, memberId, period: 3, limitUsd: "7.5" });
    await store.call("setMemberLimits", { limits: { memberId, requestsPerMinute: 10 } });
    await store.call("beginRun", { runId: "r1", conversationId: "c1", memberId, initialMessages: [userText("secret prompt text")], modelId: "byok-model" });

    const rows = await audit();
    expect(rows.map((r) => r.action)).toEqual([
      "team.created",
      "member.created",
      "key.created",
      "key.created",
      "key.created",
      "key.rotated",
      "key.revoked",
      "team.updated",
      "budget.set",
      "budget.set",
      "limits.set",
      "run.started",
    ]);
    expect(rows.find((r) => r.action === "run.started")).toMatchObject({ actor: "member", memberId });
    expect(rows.filter((r) => r.action === "budget.set").map((r) => [r.details["limit_usd"], r.details["previous_limit_usd"]])).toEqual([
      ["5.000000000000", null],
      ["7.500000000000", "5.000000000000"],
    ]);
    // Run starts say who, which model and when, never what was asked.
    expect(JSON.stringify(rows)).not.toContain("secret prompt text");
    expect((await store.call("listAudit", { actionPrefix: "key." })).entries.map((e) => e.action)).toEqual(["key.revoked", "key.rotated", "key.created", "key.created", "key.created"]);

    await expect(store.sql("UPDATE audit_log SET actor = 'someone else'")).rejects.toThrow(/append-only/);
    await expect(store.sql("DELETE FROM audit_log")).rejects.toThrow(/append-only/);
  });

  /** A member of a team keeping content `days` days, with a finished run holding a tool round, and blobs. */
  async function conversationWithContent(name: string, conversationId: string, days: number | undefined) {
    const team = (await store.call("createTeam", { name: `${name}-team`, ...(days === undefined ? {} : { retentionDays: days }) })).team!;
    const memberId = (await store.call("createMember", { name, teamId: team.teamId })).member!.memberId;
    const imported = await store.call("importHistory", { conversationId, memberId, messages: [userText(`${name}: earlier question`)] });
    const runId = `${conversationId}-run`;
    const begun = await store.call("beginRun", { runId, conversationId, memberId, baseRevisionId: imported.revisionId, initialMessages: [userText(`${name}: read it`)] });
    await store.call("createToolRound", {
      runId,
      roundId: "round-1",
      expectedHeadRevisionId: begun.run!.startRevisionId,
      assistant: { content: [{ part: { case: "toolCall", value: { callId: "A", name: "read_file", argumentsJson: "{}" } } }] },
      providerCallIndex: 1,
    });
    await store.call("commitToolResult", { runId, roundId: "round-1", callId: "A", content: `${name}: file contents`, isError: false });
    await store.call("finishRun", { runId, status: RunStatus.COMPLETED });
    await store.call("putBlob", { data: Buffer.from(`${name} only blob`), conversationId });
    await store.call("putBlob", { data: Buffer.from("shared blob"), conversationId });
    return { memberId, runId };
  }

  const sha = (text: string) => createHash("sha256").update(text).digest();

  it("deletes content older than the team's retention, keeps runs, ledger and audit, and a shared blob another conversation still uses", async () => {
    const alice = await conversationWithContent("alice", "c-alice", 30);
    await conversationWithContent("bob", "c-bob", undefined);
    const count = async (table: string, conversationId: string) => Number((await store.sql(`SELECT count(*) AS n FROM ${table} WHERE conversation_id = $1`, [conversationId])).rows[0].n);

    // 29 days later nothing is old enough.
    now += 29 * DAY;
    expect((await store.call("purgeContent", {})).purge).toMatchObject({ conversations: 0 });
    // 31 days later alice's team's content goes, bob's team keeps everything.
    now += 2 * DAY;
    const { purge } = await store.call("purgeContent", {});
    expect(purge).toMatchObject({ conversations: 1, messages: 4, revisions: 3, toolRounds: 1, toolResults: 1, blobs: 1 });
    expect(await count("messages", "c-alice")).toBe(0);
    expect(await count("revisions", "c-alice")).toBe(0);
    expect(await count("messages", "c-bob")).toBeGreaterThan(0);
    const blobs = await store.call("getBlobs", { ids: [sha("alice only blob"), sha("shared blob"), sha("bob only blob")] });
    expect(blobs.blobs.map((b) => Buffer.from(b.data).toString())).toEqual(["shared blob", "bob only blob"]);

    // The run and its accounting stay; the audit says what was deleted, without content.
    const run = (await store.call("getRun", { runId: alice.runId })).run!;
    expect(run).toMatchObject({ status: RunStatus.COMPLETED, startRevisionId: "", headRevisionId: "" });
    const purged = (await audit("retention.")).at(-1)!;
    expect(purged).toMatchObject({ action: "retention.purged", actor: "retention", memberId: alice.memberId, details: { conversation_id: "c-alice", retention_days: 30, messages: 4 } });
    expect((await audit("run.")).map((r) => r.action)).toEqual(["run.started", "run.started"]);

    // The next import of the client's history is a fresh one; a begin on a purged base says why.
    const again = await store.call("importHistory", { conversationId: "c-alice", memberId: alice.memberId, messages: [userText("alice: earlier question"), userText("alice: read it")] });
    expect(again.error).toBeUndefined();
    expect((await store.call("getRevisionMessages", { revisionId: again.revisionId })).messages).toHaveLength(2);
    const stale = await store.call("beginRun", { runId: "late", conversationId: "c-alice", memberId: alice.memberId, baseRevisionId: "00000000-0000-4000-8000-00000000dead" });
    expect(stale.error?.kind).toBe(StoreErrorKind.INVALID);
    expect(stale.error?.message).toMatch(/deleted by its team's retention policy .* send the message again/);
  });

  it("leaves a conversation alone while its run is running, and content tables refuse deletes outside a purge", async () => {
    const team = (await store.call("createTeam", { name: "short", retentionDays: 1 })).team!;
    const memberId = (await store.call("createMember", { name: "carol", teamId: team.teamId })).member!.memberId;
    await store.call("beginRun", { runId: "busy", conversationId: "c-busy", memberId, initialMessages: [userText("still working")] });
    await store.call("putBlob", { data: Buffer.from("a blob"), conversationId: "c-busy" });
    await expect(store.sql("DELETE FROM messages")).rejects.toThrow(/append-only/);
    await expect(store.sql("DELETE FROM blobs")).rejects.toThrow(/append-only/);
    await expect(store.sql("BEGIN; SET LOCAL byok.retention_purge = 'on'; UPDATE messages SET body = '{}'; COMMIT")).rejects.toThrow(/append-only/);
    await store.sql("ROLLBACK");
    now += 2 * DAY;
    expect((await store.call("purgeContent", {})).purge).toMatchObject({ conversations: 0 });
    await store.call("finishRun", { runId: "busy", status: RunStatus.COMPLETED });
    expect((await store.call("purgeContent", {})).purge).toMatchObject({ conversations: 1, messages: 1, blobs: 1 });
  });

  it("purges a compacted conversation whole: both chains, the summary and the context anchors", async () => {
    const team = (await store.call("createTeam", { name: "long", retentionDays: 7 })).team!;
    const memberId = (await store.call("createMember", { name: "dana", teamId: team.teamId })).member!.memberId;
    const conversationId = "c-long";
    const begun = await store.call("beginRun", { runId: "long-1", conversationId, memberId, initialMessages: [userText("<ctx>", "request-context:1"), userText("turn one", "u1")] });
    const answered = await store.call("appendMessages", {
      runId: "long-1",
      expectedHeadRevisionId: begun.run!.startRevisionId,
      messages: [assistantText("answer one")],
      providerCallIndex: 1,
      requestInputTokens: 900n,
    });
    const asked = await store.call("appendMessages", { runId: "long-1", expectedHeadRevisionId: answered.revisionId, messages: [userText("turn two", "u2")] });
    const history = await store.call("getRevisionMessages", { revisionId: asked.revisionId });
    // The audit and retention triggers let a compaction through like any other write.
    const compacted = await store.call("compactHistory", {
      runId: "long-1",
      expectedHeadRevisionId: asked.revisionId,
      summary: { body: { case: "user", value: { clientId: "summary:x", origin: UserOrigin.SUMMARY, content: [{ part: { case: "text", value: { text: "they asked one thing" } } }] } } },
      keptMessageIds: [history.messageIds[0]!, history.messageIds[3]!],
      summarizedCount: 2,
      providerCallIndex: 2,
    });
    expect(compacted.error).toBeUndefined();
    const final = await store.call("appendMessages", {
      runId: "long-1",
      expectedHeadRevisionId: compacted.revisionId,
      messages: [assistantText("answer two")],
      providerCallIndex: 3,
      requestInputTokens: 400n,
    });
    expect(final.error).toBeUndefined();
    await store.call("finishRun", { runId: "long-1", status: RunStatus.COMPLETED });
    const anchors = async () => Number((await store.sql("SELECT count(*) AS n FROM context_anchors a JOIN revisions r ON r.id = a.revision_id WHERE r.conversation_id = $1", [conversationId])).rows[0].n);
    expect(await anchors()).toBe(2);
    await expect(store.sql("DELETE FROM context_anchors")).rejects.toThrow(/append-only/);
    await expect(store.sql("UPDATE context_anchors SET input_tokens = 1")).rejects.toThrow(/append-only/);

    now += 8 * DAY;
    const { purge, error } = await store.call("purgeContent", {});
    expect(error).toBeUndefined();
    // Messages: context, turn one, answer one, turn two, the summary, answer two; revisions: the
    // start, two appends, the compacted root and the append after it.
    expect(purge).toMatchObject({ conversations: 1, messages: 6, revisions: 5 });
    expect(Number((await store.sql("SELECT count(*) AS n FROM context_anchors")).rows[0].n)).toBe(0);
    expect(Number((await store.sql("SELECT count(*) AS n FROM revisions WHERE conversation_id = $1", [conversationId])).rows[0].n)).toBe(0);
    expect((await store.call("getRun", { runId: "long-1" })).run).toMatchObject({ status: RunStatus.COMPLETED, headRevisionId: "" });

    // The client's compacted history comes back as a fresh one.
    const again = await store.call("importHistory", {
      conversationId,
      memberId,
      messages: [compacted.messages[0]!, userText("<ctx>", "request-context:1"), userText("turn two", "u2"), assistantText("answer two")],
    });
    expect(again.error).toBeUndefined();
    expect((await store.call("getRevisionMessages", { revisionId: again.revisionId })).messages).toHaveLength(4);
  });
});
