/**
 * What writing the ledger costs as the ledger grows. Every model call of every
 * client ends in one ledger row, written by the store's `settleCalls` in
 * batches (the provider gateway's ledger writer sends what settled within
 * ACCOUNTING_LEDGER_LINGER_MS as one accounting.settle_many); the ledger is
 * append-only, so a team's ledger only grows. A batch must cost the same at
 * any size.
 *
 * Runs `settleCalls` in this process on the store's own pipelined pool, on a
 * fresh migrated database. The ledger grows by settled batches, as under
 * load, and at each size in BENCH_LEDGER_SIZES the next BENCH_BATCHES batches
 * are measured: Postgres CPU (the pool's backends, from /proc), this
 * process's CPU (the store's side) and the wall time p50 / p99 per batch.
 * Autovacuum is off for the bench's ledger, so its statistics are those of a
 * ledger that grew since autovacuum last analyzed it (here: never), which
 * is where a plan may read the whole table; a last row measures the largest
 * size again after ANALYZE.
 *
 *   npm run bench -- ledger-settle
 *
 * Needs Postgres (DATABASE_URL). Environment: BENCH_LEDGER_SIZES ("0,30000,
 * 100000" rows before each measured phase), BENCH_BATCH (200 calls: the
 * provider gateway's largest batch, which its ledger writer fills at about
 * 1,000 calls a second), BENCH_BATCHES (40 per size).
 */
import { randomUUID } from "node:crypto";
import { performance } from "node:perf_hooks";
import { DEFAULT_TEAM_ID } from "@byok/contracts";
import { silentLogger } from "@byok/platform/logger";
import { settleCalls, type SettleInput } from "@byok/store/control/settle";
import { createPool, runMigrations } from "@byok/store/database";
import { ADMIN_DATABASE_URL, createTestDatabase } from "@byok/test-support/infra";
import { formatMachineSpeed, measureMachineSpeed } from "./support/machine-speed.ts";
import { cpuDuring, cpuSum, postgresBackends, ProcessSampler } from "./support/proc-stats.ts";
import { machineContext, percentile, renderTable } from "./support/report.ts";
import { intSetting, listSetting } from "./support/settings.ts";

const SIZES = listSetting("BENCH_LEDGER_SIZES", [0, 30_000, 100_000], { min: 0 });
const BATCH = intSetting("BENCH_BATCH", 200, { min: 1 });
const BATCHES = intSetting("BENCH_BATCHES", 40, { min: 1 });
const PICO_PER_CALL = 12_300_000n;

function call(): SettleInput {
  return {
    entry: {
      callRef: `req:${randomUUID()}`,
      ticketId: randomUUID(),
      memberId: "bench-member",
      teamId: DEFAULT_TEAM_ID,
      clientKind: "openai-api",
      modelId: "bench-chat",
      providerId: "mock",
      upstreamModel: "gpt-4o",
      runId: null,
      callIndex: null,
      requestId: randomUUID(),
      outcome: "ok",
      tokens: { input: 100n, output: 20n, cacheRead: undefined, cacheWrite: undefined, reasoning: undefined },
      costPico: PICO_PER_CALL,
      chargedPico: PICO_PER_CALL,
      startedAt: new Date(),
    },
    charges: [],
  };
}

async function main(): Promise<void> {
  const db = await createTestDatabase();
  const pool = createPool(db.url, 4, silentLogger());
  try {
    await runMigrations(pool, silentLogger());
    await pool.query("ALTER TABLE ledger SET (autovacuum_enabled = false)");
    const backends = new ProcessSampler([{ name: "postgres", pids: () => postgresBackends(ADMIN_DATABASE_URL, db.name) }]);
    const settleBatch = async (): Promise<void> => {
      const outcome = await settleCalls(
        pool,
        Array.from({ length: BATCH }, () => call()),
      );
      if (outcome.kind !== "ok" || outcome.value.some((result) => result.kind !== "ok")) throw new Error(`a batch was refused: ${JSON.stringify(outcome, (_k, v: unknown) => (typeof v === "bigint" ? v.toString() : v))}`);
    };

    const machine = machineContext();
    console.log(`\nledger-settle: batches of ${BATCH} calls into a growing ledger, ${machine.cores} cores (${machine.cpuModel}), Node ${machine.node}, load ${machine.loadAverage}`);
    console.log(`machine speed at the start: ${formatMachineSpeed(await measureMachineSpeed())}`);
    const rows: string[][] = [];
    const ledgerRows = async (): Promise<number> => Number((await pool.query<{ count: string }>("SELECT count(*) FROM ledger")).rows[0]!.count);
    const measure = async (statistics: string): Promise<void> => {
      const size = await ledgerRows();
      const walls: number[] = [];
      const batches = await cpuDuring(backends, async () => {
        for (let i = 0; i < BATCHES; i++) {
          const started = performance.now();
          await settleBatch();
          walls.push(performance.now() - started);
        }
      });
      const postgresMs = cpuSum(batches.cpu);
      rows.push([
        String(size),
        statistics,
        (postgresMs / BATCHES).toFixed(2),
        (batches.selfMs / BATCHES).toFixed(2),
        percentile(walls, 50).toFixed(2),
        percentile(walls, 99).toFixed(2),
      ]);
    };
    for (const size of SIZES) {
      while ((await ledgerRows()) + BATCH <= size) await settleBatch();
      await measure("none yet");
    }
    await pool.query("ANALYZE ledger");
    await measure("fresh (ANALYZE)");
    console.log(renderTable(["ledger rows before", "statistics", "Postgres CPU ms / batch", "store CPU ms / batch", "wall p50 ms", "wall p99 ms"], rows));
    console.log(`machine speed at the end: ${formatMachineSpeed(await measureMachineSpeed())}`);
  } finally {
    await pool.end();
    await db.drop();
  }
}

await main();
