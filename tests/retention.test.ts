/**
 * Retention end to end with the fake Cursor client: a conversation's content
 * older than its team's retention_days is deleted by the store's retention
 * job, the ledger and the audit log stay, and the next turn of that
 * conversation starts from the client's checkpoint as a fresh import: the
 * model still sees the whole conversation, and the turn ends normally.
 * (The store-level cases, shared blobs and refused deletes:
 * services/store/src/retention/retention.int.test.ts.)
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DEFAULT_TEAM_ID } from "@byok/contracts";
import { readChatFixture } from "@byok/test-support/chat-fixture";
import { chatMessages, textOf } from "@byok/test-support/chat-requests";
import { providerFixture } from "@byok/test-support/fixtures";
import { startGateway, type GatewayHarness } from "@byok/test-support/gateway-harness";
import { waitFor } from "@byok/test-support/infra";

const TEXT_FIXTURE = providerFixture("openai-chat", "openai-gpt4o-text-usage.sse");
const DAY_MS = 86_400_000;

describe("retention: a purged conversation goes on from the client's checkpoint", () => {
  let gw: GatewayHarness;
  /** How far the store's clock runs ahead of the real one. */
  let ahead = 0;
  beforeEach(async () => {
    ahead = 0;
    gw = await startGateway({ storeNow: () => new Date(Date.now() + ahead), model: { price: { input: "1", output: "2" } } });
  });
  afterEach(() => gw.stop());

  it("deletes the content after retention_days, keeps ledger and audit, and the next turn re-imports the history", async () => {
    // Runs without the edge proxy belong to the member "local", in the default team: keep content 7 days.
    const team = await gw.store("updateTeam", { teamId: DEFAULT_TEAM_ID, name: "default", retentionDays: 7 });
    expect(team.error).toBeUndefined();
    const expected = readChatFixture(TEXT_FIXTURE);
    gw.llm.enqueue({ kind: "fixture", file: TEXT_FIXTURE });
    gw.llm.enqueue({ kind: "fixture", file: TEXT_FIXTURE });
    const chat = gw.client().conversation();
    const first = await chat.send("First question: what is the weather?", { modelId: gw.modelId }).finished;
    expect(first.end, first.describe()).toEqual({ kind: "ok", metadata: {} });
    const messagesOf = async () => Number((await gw.sql<{ n: string }>("SELECT count(*) AS n FROM messages WHERE conversation_id = $1", [chat.id]))[0]!.n);
    expect(await messagesOf()).toBeGreaterThan(0);

    // Six days on nothing is due; eight days on the retention job deletes the conversation's content.
    ahead = 6 * DAY_MS;
    expect((await gw.store("purgeContent", {})).purge).toMatchObject({ conversations: 0 });
    ahead = 8 * DAY_MS;
    const { purge } = await gw.store("purgeContent", {});
    expect(purge?.conversations).toBe(1);
    expect(purge?.messages).toBeGreaterThan(0);
    ahead = 0;
    expect(await messagesOf()).toBe(0);
    expect(await gw.sql("SELECT id FROM revisions WHERE conversation_id = $1", [chat.id])).toEqual([]);
    // Ledger rows are written after the call, batched (a few ms later): wait for them.
    const ledgerRows = await waitFor(async () => {
      const rows = await gw.sql<{ run_id: string }>("SELECT run_id FROM ledger");
      return rows.length > 0 && rows;
    }, "the first run in the ledger");
    expect(ledgerRows.map((r) => r.run_id)).toEqual([first.requestId]);

    // The next turn: the client still has its checkpoint; the gateway imports it afresh and the model sees all of it.
    const second = await chat.send("Second question: and tomorrow?", { modelId: gw.modelId }).finished;
    expect(second.end, second.describe()).toEqual({ kind: "ok", metadata: {} });
    expect(second.text).toBe(expected.text);
    const [, call2] = gw.llm.requestsTo("openai-chat");
    const sent = chatMessages(call2);
    expect(sent.map((m) => m.role).slice(-3)).toEqual(["user", "assistant", "user"]);
    expect(sent.some((m) => m.role === "user" && textOf(m.content).includes("First question: what is the weather?"))).toBe(true);
    expect(textOf(sent.at(-2)!.content)).toBe(expected.text);
    expect(textOf(sent.at(-1)!.content)).toContain("Second question: and tomorrow?");
    expect(await messagesOf()).toBeGreaterThan(0);

    // Ledger and audit kept everything: both runs, and the purge (without content).
    await waitFor(async () => (await gw.sql("SELECT run_id FROM ledger")).length === 2, "both runs in the ledger");
    expect((await gw.sql("SELECT run_id FROM ledger")).length).toBe(2);
    const audit = (await gw.store("listAudit", { limit: 100 })).entries.map((e) => e.action).reverse();
    expect(audit.filter((a) => a === "run.started")).toHaveLength(2);
    expect(audit).toContain("retention.purged");
    expect(audit).toContain("team.updated");
    const purgeRow = (await gw.store("listAudit", { actionPrefix: "retention." })).entries[0]!;
    expect(JSON.parse(purgeRow.detailsJson)).toMatchObject({ conversation_id: chat.id, retention_days: 7 });
    expect(purgeRow.detailsJson).not.toContain("weather");
  });
});
