/**
 * One side of a transport primitive for bench/turn-floor.ts, as its own
 * process: the work a Cursor turn cannot avoid doing (an HTTP request
 * answered, a bus message sent and received, a Postgres transaction, an
 * upstream stream read), on the same transports the services use
 * (node:http, `connectNats` from @byok/platform, the store's pipelined pool
 * and transaction helpers) and with nothing of the services' own logic.
 *
 *   node bench/support/floor-peer.ts <control port> <role as JSON>
 *
 * Roles:
 * - `{"kind":"http-server"}`: answers `POST /unary` with a 60-byte body (as
 *   a BidiAppend is answered) and `POST /stream?writes=k` with k chunks, each
 *   in a pass of the event loop of its own (as RunSSE frames go out);
 * - `{"kind":"bus-echo","natsUrl":...,"subject":...}`: answers every request
 *   on `subject` with a payload of the request's size;
 * - `{"kind":"bus-caller","natsUrl":...,"subject":...,"bytes":n}`: on
 *   `POST /run?n=N&c=C`, N requests to the echo, C of them in flight at a
 *   time (as the other roles' /run);
 * - `{"kind":"postgres","databaseUrl":...}`: on `POST /run?n=N`, N
 *   transactions on a pool of the store's default size, each in two round trips: BEGIN, a row
 *   locked and two reads; then two writes and COMMIT (the shape of the
 *   store's run.append, see services/store/src/database.ts);
 * - `{"kind":"upstream-reader","upstreamUrl":...}`: on `POST /run?n=N`, N
 *   streamed POSTs on undici's keep-alive pool (as the
 *   provider gateway calls a provider), every chunk read; the latency
 *   reported is the first chunk's.
 *
 * Every role serves `POST /run` on the control port (the http-server role
 * serves its primitive there too) and answers it with the time the N
 * operations took, each one's latency in ms, as JSON. Prints "listening" on
 * stdout once it accepts connections.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { performance } from "node:perf_hooks";
import { Pool } from "undici";
import { connectNats } from "@byok/platform/nats";
import { silentLogger } from "@byok/platform/logger";
import { commitBehind, createPool, inTransaction, preparedQuery, together } from "@byok/store/database";
import { runInFlight } from "./in-flight.ts";

type Role =
  | { readonly kind: "http-server" }
  | { readonly kind: "bus-echo"; readonly natsUrl: string; readonly subject: string }
  | { readonly kind: "bus-caller"; readonly natsUrl: string; readonly subject: string; readonly bytes: number }
  | { readonly kind: "postgres"; readonly databaseUrl: string }
  | { readonly kind: "upstream-reader"; readonly upstreamUrl: string };

/** Runs one operation; resolves when it is done, with the latency to report when that is not the whole operation's. */
type Operation = () => Promise<number | void>;

const [portText, roleText] = process.argv.slice(2);
if (portText === undefined || roleText === undefined) throw new Error("usage: floor-peer.ts <port> <role as JSON>");
const role = JSON.parse(roleText) as Role;
const UNARY_ANSWER = Buffer.alloc(60, 1);
const STREAM_CHUNK = Buffer.alloc(200, 2);

async function operationOf(role: Role): Promise<Operation | undefined> {
  switch (role.kind) {
    case "http-server":
      return undefined;
    case "bus-echo": {
      const nc = await connectNats(role.natsUrl, "floor-echo", silentLogger());
      nc.subscribe(role.subject, {
        callback: (_error, msg) => {
          msg.respond(msg.data);
        },
      });
      await nc.flush();
      return undefined;
    }
    case "bus-caller": {
      const nc = await connectNats(role.natsUrl, "floor-caller", silentLogger());
      const payload = new Uint8Array(role.bytes).fill(3);
      return async () => {
        await nc.request(role.subject, payload, { timeout: 10_000 });
      };
    }
    case "postgres":
      return postgresTransaction(role.databaseUrl);
    case "upstream-reader": {
      const upstream = new URL(role.upstreamUrl);
      const pool = new Pool(upstream.origin, { connections: 64 });
      const body = JSON.stringify({ model: "gpt-4o", stream: true, messages: [{ role: "user", content: "hello" }] });
      return async () => {
        const started = performance.now();
        let firstChunkMs: number | undefined;
        const answer = await pool.request({ path: "/v1/chat/completions", method: "POST", headers: { "content-type": "application/json" }, body });
        for await (const _chunk of answer.body) {
          // read and dropped: the floor of relaying is reading
          firstChunkMs ??= performance.now() - started;
        }
        return firstChunkMs;
      };
    }
  }
}

/** Conversations the transactions spread over, so that concurrent ones lock different rows (as runs of different conversations do). */
const CONVERSATIONS = 1024;

/** The tables and the statements of one transaction in two round trips, prepared as the store prepares its hot paths. */
async function postgresTransaction(databaseUrl: string): Promise<Operation> {
  // As many connections as the store's pool has by default (DATABASE_POOL_SIZE).
  const pool = createPool(databaseUrl, 10, silentLogger());
  await pool.query("CREATE TABLE IF NOT EXISTS floor_heads (id int PRIMARY KEY, head bigint NOT NULL)");
  await pool.query("CREATE TABLE IF NOT EXISTS floor_rows (conversation int NOT NULL, seq bigint NOT NULL, body jsonb NOT NULL, PRIMARY KEY (conversation, seq))");
  await pool.query("INSERT INTO floor_heads (id, head) SELECT g, 0 FROM generate_series(1, $1::int) g ON CONFLICT (id) DO NOTHING", [CONVERSATIONS]);
  const body = JSON.stringify({ role: "assistant", text: "x".repeat(400) });
  let next = 0;
  return async () => {
    const conversation = (next++ % CONVERSATIONS) + 1;
    await inTransaction(pool, async (tx) => {
      const [head] = await together(
        preparedQuery<{ head: string }>(tx, "SELECT head FROM floor_heads WHERE id = $1 FOR UPDATE", [conversation]),
        preparedQuery(tx, "SELECT seq FROM floor_rows WHERE conversation = $1 ORDER BY seq DESC LIMIT 1", [conversation]),
        preparedQuery(tx, "SELECT 1 FROM floor_heads WHERE id = $1", [conversation]),
      );
      const seq = Number(head.rows[0]?.head ?? 0) + 1;
      return commitBehind(
        together(
          preparedQuery(tx, "INSERT INTO floor_rows (conversation, seq, body) VALUES ($1, $2, $3)", [conversation, seq, body]),
          preparedQuery(tx, "UPDATE floor_heads SET head = $2 WHERE id = $1", [conversation, seq]),
        ),
      );
    });
  };
}

/** `count` operations, `concurrency` of them in flight at a time: each one's latency. */
function runMany(operation: Operation, count: number, concurrency: number): Promise<number[]> {
  return runInFlight(count, concurrency, async () => {
    const at = performance.now();
    const reported = await operation();
    return reported ?? performance.now() - at;
  });
}

function serveHttpPrimitive(req: IncomingMessage, res: ServerResponse, url: URL): void {
  const chunks: Buffer[] = [];
  req.on("data", (chunk: Buffer) => chunks.push(chunk));
  req.on("end", () => {
    if (url.pathname === "/unary") {
      res.writeHead(200, { "content-type": "application/proto", "content-length": UNARY_ANSWER.length });
      res.end(UNARY_ANSWER);
      return;
    }
    const writes = Number(url.searchParams.get("writes") ?? "1");
    res.writeHead(200, { "content-type": "application/connect+proto" });
    const writeFrom = (index: number): void => {
      if (index === writes) {
        res.end();
        return;
      }
      res.write(STREAM_CHUNK);
      setImmediate(() => writeFrom(index + 1));
    };
    writeFrom(0);
  });
}

async function main(): Promise<void> {
  const operation = await operationOf(role);
  const server = createServer({ keepAliveTimeout: 65_000 }, (req, res) => {
    const url = new URL(req.url ?? "/", "http://peer");
    if (url.pathname !== "/run") {
      serveHttpPrimitive(req, res, url);
      return;
    }
    req.resume();
    req.on("end", () => {
      if (operation === undefined) {
        res.writeHead(404).end();
        return;
      }
      const count = Number(url.searchParams.get("n") ?? "1");
      const concurrency = Number(url.searchParams.get("c") ?? "1");
      runMany(operation, count, concurrency).then(
        (latencies) => res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ latencies })),
        (error: unknown) => res.writeHead(500).end(String(error)),
      );
    });
  });
  server.listen(Number(portText), "127.0.0.1", () => process.stdout.write("listening\n"));
}

await main();
