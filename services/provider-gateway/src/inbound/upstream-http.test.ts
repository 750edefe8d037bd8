import { createServer, type Server } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { sendUpstream, type UpstreamResponse } from "./upstream-http.ts";

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  server = undefined;
});

function body(response: UpstreamResponse): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    response.read({ data: (chunk) => chunks.push(chunk), end: () => resolve(Buffer.concat(chunks).toString("utf8")), error: reject });
  });
}

describe("sendUpstream", () => {
  it("sends a request again once when the server dropped the kept-alive connection it came on", async () => {
    const requestsOn = new Map<Socket, number>();
    server = createServer((req, res) => {
      const n = (requestsOn.get(req.socket) ?? 0) + 1;
      requestsOn.set(req.socket, n);
      // The second request on a connection finds it closed (the race with the server's idle timeout).
      if (n === 2) {
        req.socket.destroy();
        return;
      }
      req.resume();
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.end("data: ok\n\n");
    });
    await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
    const target = { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/chat/completions`, headers: {} };
    const signal = new AbortController().signal;
    expect(await body(await sendUpstream(target, "{}", signal, 5_000))).toBe("data: ok\n\n");
    expect(await body(await sendUpstream(target, "{}", signal, 5_000))).toBe("data: ok\n\n");
    expect(requestsOn.size).toBe(2);
  });
});
