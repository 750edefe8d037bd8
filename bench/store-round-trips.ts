/**
 * The store's run lifecycle on its own: turns of run.begin, one tool round
 * (tool_round.create, tool_round.commit_result), run.append and run.finish,
 * called as the store's handlers call them (no bus), on a real Postgres. Two arms, one after the other on fresh databases:
 *
 *   - direct: the pool talks to Postgres itself; the latencies are what a
 *     turn pays in the store (CPU, the WAL flush of each COMMIT, round trips);
 *   - delayed: a TCP relay in front of Postgres holds every chunk for
 *     BENCH_DELAY_MS each way, so one round trip costs 2 x BENCH_DELAY_MS and
 *     an operation's latency divided by that counts its round trips.
 *
 *   node bench/store-round-trips.ts                   # this tree's store
 *   STORE_SRC=/path/to/other/services/store/src node bench/store-round-trips.ts
 *
 * With COMPARE_SRC (another tree's services/store/src) every phase runs both
 * stores, turn by turn in turn (each conversation's turns alternate between
 * them, on the same database), so machine noise hits them alike.
 *
 * Environment (all optional): BENCH_TURNS (200 per phase), BENCH_CONCURRENCY (4
 * conversations at once), BENCH_DELAY_MS (5), STORE_SRC (the store to measure),
 * COMPARE_SRC (a second store).
 */
import net from "node:net";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { pathToFileURL } from "node:url";
import { create } from "@bufbuild/protobuf";
import { AssistantMessageSchema, MessageSchema, UserOrigin, type AssistantMessage, type Message } from "@byok/contracts";
import { silentLogger } from "@byok/platform";
import { createTestDatabase } from "@byok/test-support/infra";
import type pg from "pg";

const turns = Number(process.env["BENCH_TURNS"] ?? "200");
const concurrency = Number(process.env["BENCH_CONCURRENCY"] ?? "4");
const delayMs = Number(process.env["BENCH_DELAY_MS"] ?? "5");
const storeSrc = path.resolve(process.env["STORE_SRC"] ?? new URL("../services/store/src", import.meta.url).pathname);
const compareSrc = process.env["COMPARE_SRC"] === undefined ? undefined : path.resolve(process.env["COMPARE_SRC"]);

type Ok<T> = { kind: "ok"; value: T } | { kind: "rejected"; rejection: { kind: string; message: string } };
interface Store {
  createPool(url: string, max: number, log: ReturnType<typeof silentLogger>): pg.Pool;
  runMigrations(pool: pg.Pool, log: ReturnType<typeof silentLogger>): Promise<void>;
  beginRun(pool: pg.Pool, input: Record<string, unknown>): Promise<Ok<{ run: { headRevisionId: string | null; beginCount: number } }>>;
  appendMessages(pool: pg.Pool, input: Record<string, unknown>): Promise<Ok<{ revisionId: string }>>;
  finishRun(pool: pg.Pool, input: Record<string, unknown>): Promise<Ok<unknown>>;
  createToolRound(pool: pg.Pool, input: Record<string, unknown>): Promise<Ok<unknown>>;
  commitToolResult(pool: pg.Pool, input: Record<string, unknown>): Promise<Ok<{ revisionId: string }>>;
}

async function loadStore(storeSrc: string): Promise<Store> {
  const at = (file: string): Promise<Record<string, unknown>> => import(pathToFileURL(path.join(storeSrc, file)).href) as Promise<Record<string, unknown>>;
  const [database, lifecycle, append, toolRounds] = await Promise.all([at("database.ts"), at("run-lifecycle.ts"), at("run-append.ts"), at("tool-rounds.ts")]);
  return { ...database, ...lifecycle, ...append, ...toolRounds } as unknown as Store;
}

function user(text: string, clientId: string): Message {
  return create(MessageSchema, { body: { case: "user", value: { clientId, origin: UserOrigin.USER, content: [{ part: { case: "text", value: { text } } }] } } });
}
function toolCall(callId: string): AssistantMessage {
  return create(AssistantMessageSchema, { content: [{ part: { case: "toolCall", value: { callId, name: "read_file", argumentsJson: `{"path":"${callId}"}` } } }] });
}
function assistant(text: string): Message {
  return create(MessageSchema, { body: { case: "assistant", value: { content: [{ part: { case: "text", value: { text } } }] } } });
}

/** A relay to `target` that holds every chunk `delay` ms in each direction (order kept). */
async function delayingRelay(target: URL, delay: number): Promise<{ url: string; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port || 5432), target.hostname);
    sockets.add(client).add(upstream);
    // No Nagle: a chunk held back for an ACK would add a delayed ACK to the count.
    client.setNoDelay(true);
    upstream.setNoDelay(true);
    const pipe = (from: net.Socket, to: net.Socket): void => {
      from.on("data", (chunk) => setTimeout(() => to.write(chunk), delay));
      from.on("close", () => setTimeout(() => to.destroy(), delay));
      from.on("error", () => to.destroy());
    };
    pipe(client, upstream);
    pipe(upstream, client);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = new URL(target.toString());
  url.hostname = "127.0.0.1";
  url.port = String((server.address() as net.AddressInfo).port);
  return {
    url: url.toString(),
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

function unwrap<T>(outcome: Ok<T>, what: string): T {
  if (outcome.kind !== "ok") throw new Error(`${what}: ${outcome.rejection.kind} ${outcome.rejection.message}`);
  return outcome.value;
}

async function phase(stores: readonly Store[], relayDelay: number): Promise<Array<Record<string, number[]>>> {
  const db = await createTestDatabase();
  const relay = relayDelay > 0 ? await delayingRelay(new URL(db.url), relayDelay) : undefined;
  const log = silentLogger();
  // Each store with its own pool (as it makes it), on the same database.
  const pools = stores.map((store) => store.createPool(relay?.url ?? db.url, concurrency + 2, log));
  const times = stores.map((): Record<string, number[]> => ({ "run.begin": [], "tool_round.create": [], "tool_round.commit_result": [], "run.append": [], "run.finish": [] }));
  try {
    await (stores[0] as Store).runMigrations(pools[0] as pg.Pool, log);
    let next = 0;
    const timed = async <T>(arm: number, op: string, call: () => Promise<T>): Promise<T> => {
      const started = performance.now();
      const result = await call();
      times[arm]?.[op]?.push(performance.now() - started);
      return result;
    };
    await Promise.all(
      Array.from({ length: concurrency }, async (_, lane) => {
        const conversationId = `bench-${lane}-${Date.now()}`;
        let head = "";
        for (let turn = 0; next < turns; turn++) {
          next++;
          const arm = (turn + lane) % stores.length;
          const store = stores[arm] as Store;
          const pool = pools[arm] as pg.Pool;
          const runId = `${conversationId}-run-${turn}`;
          const clientId = `${runId}-user`;
          const begun = unwrap(
            await timed(arm, "run.begin", () =>
              store.beginRun(pool, {
                runId,
                conversationId,
                memberId: "bench-member",
                baseRevisionId: head,
                initialMessages: [user(`question ${turn}`, clientId)],
                parentRunId: "",
                parentToolCallId: "",
                modelId: "bench-model",
                onceClientIds: [clientId],
              }),
            ),
            "run.begin",
          );
          const roundId = `${runId}-round`;
          unwrap(
            await timed(arm, "tool_round.create", () =>
              store.createToolRound(pool, {
                runId,
                roundId,
                expectedHeadRevisionId: begun.run.headRevisionId ?? "",
                assistant: toolCall(`${runId}-call`),
                providerCallIndex: 1,
                requestInputTokens: 900n + BigInt(turn),
              }),
            ),
            "tool_round.create",
          );
          const result = unwrap(
            await timed(arm, "tool_round.commit_result", () =>
              store.commitToolResult(pool, { runId, roundId, callId: `${runId}-call`, content: "file contents", isError: false }),
            ),
            "tool_round.commit_result",
          );
          const appended = unwrap(
            await timed(arm, "run.append", () =>
              store.appendMessages(pool, {
                runId,
                expectedHeadRevisionId: result.revisionId,
                messages: [assistant(`answer ${turn}`)],
                providerCallIndex: 2,
                requestInputTokens: 1000n + BigInt(turn),
              }),
            ),
            "run.append",
          );
          unwrap(
            await timed(arm, "run.finish", () =>
              store.finishRun(pool, { runId, status: "completed", failureKind: null, failureMessage: "", usage: undefined, beginCount: begun.run.beginCount }),
            ),
            "run.finish",
          );
          head = appended.revisionId;
        }
      }),
    );
  } finally {
    await Promise.all(pools.map((pool) => pool.end()));
    await relay?.close();
    await db.drop();
  }
  return times;
}

function quantile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
}

const sources = compareSrc === undefined ? [storeSrc] : [storeSrc, compareSrc];
const stores = await Promise.all(sources.map(loadStore));
console.log(`${turns} turns per phase, ${concurrency} conversations at once${sources.length > 1 ? ", the stores turn by turn in turn" : ""}`);
sources.forEach((src, i) => console.log(`store ${String.fromCharCode(65 + i)}: ${src}`));
for (const delay of [0, delayMs]) {
  const byStore = await phase(stores, delay);
  byStore.forEach((times, i) => {
    for (const [op, values] of Object.entries(times)) {
      const p50 = quantile(values, 0.5);
      const trips = delay > 0 ? ` ~${(p50 / (2 * delay)).toFixed(1)} round trips` : "";
      const where = delay > 0 ? `relay ${delay} ms each way` : "direct";
      console.log(`${String.fromCharCode(65 + i)} ${where.padEnd(20)} ${op.padEnd(24)} n ${values.length}  p50 ${p50.toFixed(2)} ms  p90 ${quantile(values, 0.9).toFixed(2)} ms${trips}`);
    }
  });
}
