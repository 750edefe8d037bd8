/**
 * Statements of the hot paths over tables that only grow (the ledger, the
 * context anchors) must find their rows through an index, whatever the
 * table's size: a plan that reads the whole table makes every call slower as
 * the team's history grows. Postgres chooses plans by cost, and for a few
 * hundred probes it prefers hashing a table of a few thousand rows, so each
 * test builds such a table, gives Postgres fresh statistics, and reads the
 * statement's plan.
 */
import { randomUUID } from "node:crypto";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DEFAULT_TEAM_ID } from "@byok/contracts";
import { LEDGER_INSERT, ledgerColumns, type LedgerInput } from "./control/settle.ts";
import { CHAIN_QUERY } from "./revisions.ts";
import { startTestStore, type TestStore } from "./store-test-harness.ts";

interface PlanNode {
  readonly "Node Type": string;
  readonly "Relation Name"?: string;
  readonly Plans?: readonly PlanNode[];
}

/** How the plan of `text` reads `table`: the node type of every scan of it. */
async function scansOf(store: TestStore, table: string, text: string, values: unknown[]): Promise<string[]> {
  const explained = await store.sql(`EXPLAIN (FORMAT JSON) ${text}`, values);
  const scans: string[] = [];
  const walk = (node: PlanNode): void => {
    if (node["Relation Name"] === table) scans.push(node["Node Type"]);
    for (const child of node.Plans ?? []) walk(child);
  };
  walk((explained.rows[0]["QUERY PLAN"] as Array<{ Plan: PlanNode }>)[0]!.Plan);
  return scans;
}

describe("plans over tables that only grow", () => {
  let store: TestStore;

  beforeEach(async () => {
    store = await startTestStore();
  });

  afterEach(async () => {
    await store.close();
  });

  it("a settle batch looks its tickets up in the ledger's index", async () => {
    await store.sql(
      `INSERT INTO ledger (call_ref, attempt, ticket_id, member_id, team_id, client_kind, model_id, provider_id, upstream_model, request_id, outcome, started_at)
       SELECT 'request:' || g, 1, gen_random_uuid(), 'member-1', $1, 'openai-api', 'team-gpt', 'openai', 'gpt-4o', 'request-' || g, 'ok', now()
         FROM generate_series(1, 3000) g`,
      [DEFAULT_TEAM_ID],
    );
    await store.sql("ANALYZE ledger");
    const entries: LedgerInput[] = Array.from({ length: 200 }, (_, i) => ({
      callRef: `run:run-next:${i + 1}`,
      ticketId: randomUUID(),
      memberId: "member-1",
      teamId: DEFAULT_TEAM_ID,
      clientKind: "cursor",
      modelId: "team-gpt",
      providerId: "openai",
      upstreamModel: "gpt-4o",
      runId: "run-next",
      callIndex: i + 1,
      requestId: null,
      outcome: "ok",
      tokens: { input: 10n, output: 2n, cacheRead: undefined, cacheWrite: undefined, reasoning: undefined },
      costPico: undefined,
      chargedPico: undefined,
      startedAt: new Date(),
    }));
    const scans = await scansOf(store, "ledger", LEDGER_INSERT, ledgerColumns(entries));
    expect(scans.length).toBeGreaterThan(0);
    expect(scans.filter((scan) => scan === "Seq Scan")).toEqual([]);
  });

  it("a history load finds its chain, its messages and its context anchor by id, not among every conversation's", async () => {
    // 3,000 anchored revisions of other conversations with a message each, and a chain of 40 revisions to load.
    await store.sql("INSERT INTO conversations (id, member_id) SELECT 'other-' || g, 'member-1' FROM generate_series(1, 100) g");
    await store.sql(
      `INSERT INTO messages (id, conversation_id, body, digest)
       SELECT gen_random_uuid(), 'other-' || (g % 100 + 1), '{"role":"user","text":"hello"}', sha256(g::text::bytea) FROM generate_series(1, 3000) g`,
    );
    await store.sql(
      `INSERT INTO revisions (id, conversation_id, message_ids, message_count, digest)
       SELECT gen_random_uuid(), conversation_id, ARRAY[id], 1, digest FROM messages`,
    );
    await store.sql("INSERT INTO context_anchors (revision_id, message_count, input_tokens, run_id, provider_call_index) SELECT id, 1, 100, 'run-x', 1 FROM revisions");
    await store.sql("INSERT INTO conversations (id, member_id) VALUES ('mine', 'member-1')");
    let parent: string | null = null;
    for (let i = 0; i < 40; i++) {
      const id = randomUUID();
      const messageId = randomUUID();
      await store.sql("INSERT INTO messages (id, conversation_id, body, digest) VALUES ($1::uuid, 'mine', '{\"role\":\"user\",\"text\":\"hi\"}', sha256($2::bytea))", [
        messageId,
        Buffer.from(messageId),
      ]);
      await store.sql("INSERT INTO revisions (id, conversation_id, parent_id, message_ids, message_count, digest) VALUES ($1::uuid, 'mine', $2::uuid, ARRAY[$3::uuid], $4, sha256($5::bytea))", [
        id,
        parent,
        messageId,
        i + 1,
        Buffer.from(id),
      ]);
      parent = id;
    }
    for (const table of ["messages", "revisions", "context_anchors"]) await store.sql(`ANALYZE ${table}`);
    for (const table of ["messages", "revisions", "context_anchors"]) {
      const scans = await scansOf(store, table, CHAIN_QUERY, [parent, null]);
      expect({ table, scans: scans.length > 0, sequential: scans.filter((scan) => scan === "Seq Scan") }).toEqual({ table, scans: true, sequential: [] });
    }
  });
});
