/**
 * The floor of an HTTP relay hop in Node, for bench/inbound-overhead.ts: a
 * node:http server that sends each POST to one upstream on a keep-alive agent
 * and pipes the answer back, with nothing else (no key check, no parsing, no
 * accounting). Run as its own process:
 *
 *   node bench/support/bare-relay.ts <listen port> <upstream base url>
 *
 * Prints "listening" on stdout once it accepts connections.
 */
import { Agent, createServer, request } from "node:http";

const [portText, upstreamText] = process.argv.slice(2);
if (portText === undefined || upstreamText === undefined) throw new Error("usage: bare-relay.ts <port> <upstream base url>");
const upstream = new URL(upstreamText);
const agent = new Agent({ keepAlive: true, maxSockets: 1024 });

const server = createServer({ keepAliveTimeout: 65_000 }, (req, res) => {
  const out = request(
    { host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, agent, headers: { "content-type": "application/json", authorization: "Bearer sk-bench" } },
    (answer) => {
      res.writeHead(answer.statusCode ?? 502, { "content-type": answer.headers["content-type"] ?? "application/octet-stream" });
      answer.pipe(res);
    },
  );
  out.on("error", () => res.destroy());
  req.pipe(out);
});
server.listen(Number(portText), "127.0.0.1", () => process.stdout.write("listening\n"));
