import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startTestStore, userText, type TestStore } from "./store-test-harness.ts";

describe("schema", () => {
  let store: TestStore;
  beforeEach(async () => {
    store = await startTestStore();
  });
  afterEach(() => store.close());

  it("rejects any rewrite of stored messages, revisions and tool results", async () => {
    const imported = await store.call("importHistory", { conversationId: "c1", memberId: "m1", messages: [userText("original")] });
    await expect(store.sql(`UPDATE messages SET body = '{"user":{}}'::jsonb`)).rejects.toThrow(/messages is append-only/);
    await expect(store.sql("DELETE FROM messages")).rejects.toThrow(/append-only/);
    await expect(store.sql("UPDATE revisions SET parent_id = NULL")).rejects.toThrow(/revisions is append-only/);
    await expect(store.sql("DELETE FROM revisions")).rejects.toThrow(/append-only/);
    const begun = await store.call("beginRun", { runId: "r1", conversationId: "c1", memberId: "m1", baseRevisionId: imported.revisionId });
    await store.call("createToolRound", {
      runId: "r1",
      roundId: "round",
      expectedHeadRevisionId: begun.run!.startRevisionId,
      assistant: { content: [{ part: { case: "toolCall", value: { callId: "A", name: "read", argumentsJson: "{}" } } }] },
    });
    expect((await store.call("commitToolResult", { runId: "r1", roundId: "round", callId: "A", content: "result" })).error).toBeUndefined();
    await expect(store.sql("UPDATE tool_results SET content = 'forged'")).rejects.toThrow(/tool_results is append-only/);
    const history = await store.call("getRevisionMessages", { revisionId: imported.revisionId });
    expect(history.messages).toHaveLength(1);
    const text = history.messages[0]!.body.case === "user" ? history.messages[0]!.body.value.content[0]?.part.value : undefined;
    expect(text).toMatchObject({ text: "original" });
  });

  it("applies migrations once and starts again on an already migrated database", async () => {
    const applied = await store.sql("SELECT name FROM migrations ORDER BY id");
    expect(applied.rows.map((r) => r.name)).toContain("initial-schema");
    const before = applied.rows.length;
    await store.restart();
    expect((await store.sql("SELECT count(*)::int AS n FROM migrations")).rows[0].n).toBe(before);
    // Still serving after the restart.
    expect((await store.call("importHistory", { conversationId: "c1", memberId: "m1", messages: [userText("x")] })).error).toBeUndefined();
  });

  it("refuses to start when an applied migration was edited afterwards", async () => {
    // Simulate an edit of a landed migration file: its recorded hash no longer matches.
    await store.sql("UPDATE migrations SET hash = 'edited' WHERE name = 'initial-schema'");
    await expect(store.restart()).rejects.toThrow(/Hashes don't match for migrations '1_initial-schema.sql'/);
  });
});
