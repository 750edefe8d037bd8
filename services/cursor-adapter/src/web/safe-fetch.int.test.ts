/**
 * safeFetch against real HTTP servers on loopback: the policy is applied to
 * every hop, the connection goes to the address that was checked, and size
 * and time limits hold. Loopback is reachable only because these policies
 * list 127.0.0.0/8; the default policy refuses it.
 */
import http, { type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { gzipSync } from "node:zlib";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { EgressPolicy } from "./egress-policy.ts";
import { safeFetch, type Resolve, type SafeFetchOptions } from "./safe-fetch.ts";

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

describe("safeFetch", () => {
  let server: http.Server;
  let base: string;
  let port: number;
  let handler: Handler;
  const seen: Array<{ url: string; host: string }> = [];

  beforeEach(async () => {
    seen.length = 0;
    handler = (_req, res) => res.end("ok");
    server = http.createServer((req, res) => {
      seen.push({ url: req.url ?? "", host: req.headers.host ?? "" });
      handler(req, res);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    port = (server.address() as AddressInfo).port;
    base = `http://127.0.0.1:${port}`;
  });
  afterEach(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  function options(overrides: Partial<SafeFetchOptions> = {}): SafeFetchOptions {
    return {
      policy: new EgressPolicy({ allowHosts: ["*"], denyHosts: [], allowNetworks: ["127.0.0.0/8"] }),
      maxBytes: 10_000,
      timeoutMs: 5_000,
      maxRedirects: 3,
      userAgent: "test",
      ...overrides,
    };
  }
  const signal = () => new AbortController().signal;

  it("fetches and decompresses a page, and reports its media type and charset", async () => {
    handler = (_req, res) => {
      res.writeHead(200, { "content-type": "text/html; charset=ISO-8859-1", "content-encoding": "gzip" });
      res.end(gzipSync(Buffer.from("<p>caf\xe9</p>", "latin1")));
    };
    const outcome = await safeFetch(`${base}/page`, options(), signal());
    if (outcome.kind !== "ok") throw new Error(outcome.message);
    expect(outcome.response).toMatchObject({ url: `${base}/page`, status: 200, mediaType: "text/html", charset: "iso-8859-1" });
    expect(outcome.response.body.toString("latin1")).toBe("<p>caf\xe9</p>");
  });

  it("refuses loopback under the default policy without connecting", async () => {
    const outcome = await safeFetch(`${base}/`, options({ policy: new EgressPolicy({ allowHosts: ["*"], denyHosts: [], allowNetworks: [] }) }), signal());
    expect(outcome).toEqual({ kind: "refused", message: "127.0.0.1 is a loopback address, which the gateway does not connect to" });
    expect(seen).toEqual([]);
  });

  it("checks every redirect again: a redirect to a private address is refused", async () => {
    handler = (req, res) => {
      if (req.url === "/start") res.writeHead(302, { location: "/next" }).end();
      else if (req.url === "/next") res.writeHead(301, { location: "http://10.20.30.40/admin" }).end();
      else res.end("never");
    };
    const outcome = await safeFetch(`${base}/start`, options(), signal());
    expect(outcome).toEqual({ kind: "refused", message: "10.20.30.40 is a private address, which the gateway does not connect to" });
    expect(seen.map((s) => s.url)).toEqual(["/start", "/next"]);
  });

  it("follows redirects up to the limit", async () => {
    handler = (req, res) => {
      const n = Number((req.url ?? "/0").slice(1));
      if (n < 5) res.writeHead(302, { location: `/${n + 1}` }).end();
      else res.end("arrived");
    };
    const followed = await safeFetch(`${base}/2`, options(), signal());
    expect(followed.kind === "ok" && followed.response.url).toBe(`${base}/5`);
    expect(await safeFetch(`${base}/0`, options(), signal())).toEqual({ kind: "failed", message: "more than 3 redirects" });
  });

  it("refuses a page over the size limit, declared or streamed", async () => {
    handler = (req, res) => {
      if (req.url === "/declared") res.writeHead(200, { "content-length": "20000" }).end("x".repeat(20_000));
      else {
        res.writeHead(200, { "content-type": "text/plain" });
        res.write("y".repeat(6_000));
        res.end("y".repeat(6_000));
      }
    };
    const message = "the page is larger than the gateway's limit of 10000 bytes";
    expect(await safeFetch(`${base}/declared`, options(), signal())).toEqual({ kind: "failed", message });
    expect(await safeFetch(`${base}/streamed`, options(), signal())).toEqual({ kind: "failed", message });
  });

  it("gives up after the time limit", async () => {
    handler = () => undefined; // never answers
    expect(await safeFetch(`${base}/slow`, options({ timeoutMs: 200 }), signal())).toEqual({ kind: "failed", message: "no complete answer within 200 ms" });
  });

  it("reports HTTP errors", async () => {
    handler = (_req, res) => res.writeHead(404).end("missing");
    expect(await safeFetch(`${base}/x`, options(), signal())).toEqual({ kind: "failed", message: "the server answered HTTP 404 Not Found" });
  });

  it("connects to the address it checked: a second, different DNS answer is never used (DNS rebinding)", async () => {
    const answers = ["127.0.0.1", "10.0.0.7"];
    const lookups: string[] = [];
    const resolve: Resolve = (hostname) => {
      lookups.push(hostname);
      return Promise.resolve([{ address: answers.shift() ?? "10.0.0.7", family: 4 }]);
    };
    const outcome = await safeFetch(`http://rebind.test:${port}/page`, options({ resolve }), signal());
    expect(outcome.kind).toBe("ok");
    expect(lookups).toEqual(["rebind.test"]);
    expect(seen).toEqual([{ url: "/page", host: `rebind.test:${port}` }]);
    // Resolved to a private address: refused before any connection.
    const refused = await safeFetch(`http://rebind.test:${port}/page`, options({ resolve }), signal());
    expect(refused).toEqual({
      kind: "refused",
      message: "rebind.test resolves to an address the gateway does not connect to (10.0.0.7 is a private address, which the gateway does not connect to)",
    });
    expect(seen).toHaveLength(1);
  });
});
