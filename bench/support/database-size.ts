/**
 * The database-size phase of bench/cursor-path.ts: the same turns on the
 * database as the run left it, then after many rows of other conversations
 * were added (messages, revisions, blobs and their references, runs, context
 * anchors, ledger rows), first with the statistics Postgres had before (as
 * between two of autovacuum's analyses) and then after ANALYZE. A turn must
 * cost the same whatever else the team's database holds: any statement that
 * reads a whole table shows here as a turn that got slower or dearer.
 *
 * Each measured step is one turn of a new conversation and one turn
 * continuing a conversation of this phase (which loads its stored history
 * and its context anchor), one after the other.
 */
import pg from "pg";
import type { UpstreamStream } from "./cursor-arms.ts";
import { cpuBetween, cpuSum } from "./proc-stats.ts";
import { formatMs, percentile, renderTable } from "./report.ts";
import type { OpenRunsContext } from "./open-runs.ts";

const PROMPT = "Say something.";

interface Step {
  readonly label: string;
  readonly newTtft: number[];
  readonly continuedTtft: number[];
  readonly cpuByProcess: ReadonlyMap<string, number>;
  readonly pairs: number;
}

/** Rows of other conversations, added in a few statements (each table in one). */
async function addRows(databaseUrl: string, rows: number): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const conversations = Math.max(1, Math.floor(rows / 20));
    await client.query("INSERT INTO conversations (id, member_id) SELECT 'filler-' || g, 'filler-member' FROM generate_series(1, $1::int) g", [conversations]);
    await client.query(
      `INSERT INTO messages (id, conversation_id, body, digest)
       SELECT gen_random_uuid(), 'filler-' || (g % $2::int + 1), jsonb_build_object('user', jsonb_build_object('text', repeat('filler text ', 20))), sha256(('m' || g)::bytea)
         FROM generate_series(1, $1::int) g`,
      [rows, conversations],
    );
    await client.query(
      `INSERT INTO revisions (id, conversation_id, message_ids, message_count, digest)
       SELECT gen_random_uuid(), conversation_id, ARRAY[id], 1, digest FROM messages WHERE conversation_id LIKE 'filler-%'`,
    );
    await client.query(
      `INSERT INTO context_anchors (revision_id, message_count, input_tokens, run_id, provider_call_index)
       SELECT id, 1, 100, 'filler-run', 1 FROM revisions WHERE conversation_id LIKE 'filler-%' AND get_byte(digest, 0) < 26`,
    );
    await client.query(
      `INSERT INTO runs (id, conversation_id, member_id, status, finished_at)
       SELECT 'filler-run-' || g, 'filler-' || g, 'filler-member', 'completed', now() FROM generate_series(1, $1::int) g`,
      [conversations],
    );
    await client.query(
      // A blob's id is the SHA-256 of its bytes (a constraint of the table).
      `INSERT INTO blobs (id, bytes) SELECT sha256(b), b FROM (SELECT sha256(('c' || g)::bytea) || sha256(('d' || g)::bytea) AS b FROM generate_series(1, $1::int) g) filler`,
      [rows],
    );
    await client.query(
      `INSERT INTO blob_refs (conversation_id, blob_id)
       SELECT 'filler-' || (g % $2::int + 1), sha256(sha256(('c' || g)::bytea) || sha256(('d' || g)::bytea)) FROM generate_series(1, $1::int) g`,
      [rows, conversations],
    );
    await client.query(
      `INSERT INTO ledger (call_ref, attempt, ticket_id, member_id, team_id, client_kind, model_id, provider_id, upstream_model, request_id, outcome, started_at)
       SELECT 'request:filler-' || g, 1, gen_random_uuid(), 'filler-member', (SELECT id FROM teams LIMIT 1), 'openai-api', 'filler-model', 'filler', 'filler', 'filler-' || g, 'ok', now()
         FROM generate_series(1, $1::int) g`,
      [Math.floor(rows / 4)],
    );
  } finally {
    await client.end();
  }
}

async function analyze(databaseUrl: string): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query("ANALYZE");
  } finally {
    await client.end();
  }
}

async function measure(ctx: OpenRunsContext, burst: UpstreamStream, label: string, pairs: number): Promise<Step> {
  const { adapter, sampler, deadline } = ctx;
  const continued = adapter.conversation();
  await adapter.turn(burst, continued, PROMPT); // its first turn: the ones measured continue it
  const newTtft: number[] = [];
  const continuedTtft: number[] = [];
  const before = await sampler.sample();
  let done = 0;
  for (; done < pairs && !deadline.passed(); done++) {
    newTtft.push((await adapter.turn(burst, adapter.conversation(), PROMPT)).firstTextMs);
    continuedTtft.push((await adapter.turn(burst, continued, PROMPT)).firstTextMs);
  }
  return { label, newTtft, continuedTtft, cpuByProcess: cpuBetween(before, await sampler.sample()), pairs: Math.max(1, done) };
}

export async function databaseSize(ctx: OpenRunsContext, burst: UpstreamStream, rows: number, pairs: number): Promise<void> {
  if (rows === 0 || pairs === 0) return;
  const steps: Step[] = [await measure(ctx, burst, "as the run left it", pairs)];
  const fillStarted = performance.now();
  await addRows(ctx.gw.db.url, rows);
  const fillSeconds = (performance.now() - fillStarted) / 1000;
  steps.push(await measure(ctx, burst, `+${rows} rows, statistics from before`, pairs));
  await analyze(ctx.gw.db.url);
  steps.push(await measure(ctx, burst, `+${rows} rows, after ANALYZE`, pairs));

  const perTurn = (step: Step, names?: readonly string[]): string => formatMs(cpuSum(step.cpuByProcess, names) / (2 * step.pairs));
  console.log(
    `\n## database size: ${pairs} pairs of turns (a new conversation, then the next turn of one conversation) per step, before and after adding ${rows} messages, revisions and blobs of other conversations (with their runs, anchors, blob references and ${Math.floor(rows / 4)} ledger rows; added in ${fillSeconds.toFixed(1)} s)`,
  );
  console.log(
    renderTable(
      ["database", "new conversation TTFT p50", "continued TTFT p50", "store CPU ms/turn", "Postgres CPU ms/turn", "all processes CPU ms/turn"],
      steps.map((step) => [
        step.label,
        formatMs(percentile(step.newTtft, 50)),
        formatMs(percentile(step.continuedTtft, 50)),
        perTurn(step, ["store"]),
        perTurn(step, ["postgres backends"]),
        perTurn(step),
      ]),
    ),
  );
}
