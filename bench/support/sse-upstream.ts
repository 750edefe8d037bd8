/**
 * The upstream of bench/inbound-overhead.ts, as its own process: a node:http
 * server that answers every POST with one recorded SSE fixture, each event in
 * its own write once the previous one was handed to the socket (as the tests'
 * mock LLM sends a fixture), chunked, on keep-alive connections. It reads and
 * drops the request body and keeps nothing per request (no parsing, no
 * recording, no queue), so that the load generator of the benchmark costs as
 * little as it can and runs beside, not inside, the client's process.
 *
 *   node bench/support/sse-upstream.ts <listen port> <fixture .sse or .jsonl file>
 *
 * Prints "listening" on stdout once it accepts connections.
 */
import { createServer, type ServerResponse } from "node:http";
import { readRecording, recordingFlavorOf } from "@byok/provider-gateway/replay/recording";

const [portText, fixture] = process.argv.slice(2);
if (portText === undefined || fixture === undefined) throw new Error("usage: sse-upstream.ts <port> <fixture .sse or .jsonl file>");
const flavor = recordingFlavorOf(fixture);
if (flavor === undefined) throw new Error(`${fixture}: not under fixtures/providers/<endpoint kind>/`);
const events = readRecording(fixture, flavor).map((event) => Buffer.from(event));

function sendFrom(res: ServerResponse, index: number): void {
  if (res.destroyed) return;
  if (index === events.length) {
    res.end();
    return;
  }
  res.write(events[index] as Buffer, () => sendFrom(res, index + 1));
}

const server = createServer({ keepAliveTimeout: 65_000 }, (req, res) => {
  req.resume();
  req.once("end", () => {
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    res.flushHeaders();
    sendFrom(res, 0);
  });
});
server.listen(Number(portText), "127.0.0.1", () => process.stdout.write("listening\n"));
