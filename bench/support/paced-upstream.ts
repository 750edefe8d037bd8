/**
 * The paced upstream of bench/cursor-path.ts's open-runs phases, as its own
 * process: a node:http server that answers every POST to
 * `/n/<deltas>/v1/chat/completions` with the chat stream the bench's
 * `textStream(deltas, intervalMs)` describes (the same events and text as the
 * tests' mock LLM sends for it), event i due i * intervalMs after the first
 * on this process's own clock: one written late does not push the later ones
 * back. It keeps nothing per request.
 *
 * Why a process of its own: with hundreds of paced streams open, the mock LLM
 * inside the bench process shared one event loop with the fake Cursor
 * clients. That loop then accepted the gateway's new upstream connections up
 * to seconds late (the listening socket's queue held dozens of them), so the
 * bench measured its own lag as the gateway's start-up (docs/performance.md,
 * "Paced streams on the mock's own clock, and runs that arrive one by one").
 *
 *   node bench/support/paced-upstream.ts <listen port> <interval ms>
 *
 * Prints "listening" on stdout once it accepts connections.
 */
import { createServer, type ServerResponse } from "node:http";
import { performance } from "node:perf_hooks";
import { jsonPayloadsToSseEvents } from "@byok/provider-gateway/replay/recording";
import { chatDeltaStream } from "@byok/test-support/provider-streams";

const [portText, intervalText] = process.argv.slice(2);
const intervalMs = Number(intervalText);
if (portText === undefined || !Number.isFinite(intervalMs) || intervalMs <= 0) throw new Error("usage: paced-upstream.ts <port> <interval ms>");

/** The stream's id, as in textStream(): both arms and the mock LLM send the same bytes. */
const STREAM_ID = "chatcmpl-bench";
const PATH = /^\/n\/(\d+)\/v1\/chat\/completions$/;
const byCount = new Map<number, readonly Buffer[]>();

function eventsFor(deltas: number): readonly Buffer[] {
  let events = byCount.get(deltas);
  if (events === undefined) {
    const { response } = chatDeltaStream(STREAM_ID, deltas);
    events = jsonPayloadsToSseEvents(
      response.chunks.map((c) => JSON.stringify(c)),
      "openai-chat",
    ).map((e) => Buffer.from(e));
    byCount.set(deltas, events);
  }
  return events;
}

/** Writes event `index` when it is due (the first at once), then the next. */
function sendFrom(res: ServerResponse, events: readonly Buffer[], index: number, firstAt: number): void {
  if (res.destroyed) return;
  if (index === events.length) {
    res.end();
    return;
  }
  const due = firstAt + index * intervalMs - performance.now();
  const write = (): void => {
    if (res.destroyed) return;
    res.write(events[index] as Buffer, () => sendFrom(res, events, index + 1, firstAt));
  };
  if (index === 0 || due <= 0) write();
  else setTimeout(write, due);
}

const server = createServer({ keepAliveTimeout: 65_000 }, (req, res) => {
  const match = PATH.exec(req.url ?? "");
  req.resume();
  req.once("end", () => {
    if (req.method !== "POST" || match === null) {
      res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: `paced-upstream: no such endpoint ${req.method} ${req.url}` } }));
      return;
    }
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    res.flushHeaders();
    sendFrom(res, eventsFor(Number(match[1])), 0, performance.now());
  });
});
server.listen(Number(portText), "127.0.0.1", () => process.stdout.write("listening\n"));
