/**
 * The edge proxy end to end over real sockets: a TLS client trusting the team CA
 * goes through the proxy (CONNECT + key) to an HTTPS stand-in for Cursor's
 * upstream and an HTTP stand-in for the adapter, both of which record exactly
 * what they received. Member keys come from an in-memory directory here; the
 * cross-service test (tests/edge-proxy.test.ts) uses the store.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import http from "node:http";
import https from "node:https";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { X509Certificate } from "node:crypto";
import { gzipSync } from "node:zlib";
import type { IncomingMessage } from "node:http";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { agent, aiserver } from "@byok/cursor-protocol";
import { silentLogger } from "@byok/platform";
import { waitFor } from "@byok/test-support/infra";
import { loadConfig } from "./config.ts";
import type { MemberDirectory, MemberLookup } from "./member-store.ts";
import { startEdgeProxy, type EdgeProxy } from "./service.ts";
import { ProxyTunnelAgent, connectThroughProxy, proxyAuthorization, request, tlsThroughProxy } from "./test-support/proxy-client.ts";
import { makeOriginPki, startHttpOrigin, startHttpsOrigin, type TestOrigin, type TestPki } from "./test-support/origins.ts";

const KEYS: Record<string, string> = { "alice-key": "member-alice", "bob-key": "member-bob" };
const directory: MemberDirectory = {
  async verifyKey(key): Promise<MemberLookup> {
    const memberId = KEYS[key];
    return memberId ? { kind: "member", memberId } : { kind: "unknown" };
  },
};

const CURSOR = "https://api2.cursor.sh";
const BYOK_MODEL = "team-gpt";

let dir: string;
let pki: TestPki;
let upstream: TestOrigin;
let adapter: TestOrigin;
let proxy: EdgeProxy;
let alice: ProxyTunnelAgent;
let bob: ProxyTunnelAgent;

function envelope(payload: Uint8Array, flags = 0): Buffer {
  const head = Buffer.alloc(5);
  head.writeUInt8(flags, 0);
  head.writeUInt32BE(payload.length, 1);
  return Buffer.concat([head, payload]);
}

function runSseBody(requestId: string): Buffer {
  return envelope(toBinary(agent.BidiRequestIdSchema, create(agent.BidiRequestIdSchema, { requestId })));
}

function appendBody(requestId: string, seqno: bigint, message: agent.AgentClientMessage): Buffer {
  const data = Buffer.from(toBinary(agent.AgentClientMessageSchema, message)).toString("hex");
  return Buffer.from(toBinary(aiserver.BidiAppendRequestSchema, create(aiserver.BidiAppendRequestSchema, { requestId: { requestId }, appendSeqno: seqno, data })));
}

function runRequest(modelId: string, conversationId: string): agent.AgentClientMessage {
  return create(agent.AgentClientMessageSchema, { message: { case: "runRequest", value: { requestedModel: { modelId }, conversationId, conversationState: {} } } });
}

const heartbeat = create(agent.AgentClientMessageSchema, { message: { case: "clientHeartbeat", value: {} } });
const PROTO = { "content-type": "application/proto", "connect-protocol-version": "1" };
const STREAM = { "content-type": "application/connect+proto", "connect-protocol-version": "1" };

function modelList(names: string[]): Buffer {
  const message = create(aiserver.AvailableModelsResponseSchema, { modelNames: names, models: names.map((name) => ({ name, defaultOn: true })) });
  return Buffer.from(toBinary(aiserver.AvailableModelsResponseSchema, message));
}

/** Starts a request and resolves with the response head; the body is read by the caller. */
function openStream(agentFor: https.Agent, url: string, headers: Record<string, string>, body: Buffer): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = https.request(url, { method: "POST", headers, agent: agentFor }, resolve);
    req.on("error", reject);
    req.end(body);
  });
}

function readAll(res: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    res.on("data", (c: Buffer) => chunks.push(c));
    res.on("end", () => resolve(Buffer.concat(chunks)));
    res.on("error", reject);
  });
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "edge-proxy-"));
  pki = await makeOriginPki();
  writeFileSync(join(dir, "upstream-ca.pem"), pki.caPem);
  upstream = await startHttpsOrigin(pki, (_req, res) => res.writeHead(404).end());
  adapter = await startHttpOrigin((_req, res) => res.writeHead(404).end());
  const config = loadConfig({
    PROXY_PORT: "0",
    UPSTREAM_ORIGIN: upstream.url,
    UPSTREAM_CA_FILE: join(dir, "upstream-ca.pem"),
    ADAPTER_URL: adapter.url,
    CA_DIR: join(dir, "ca"),
    ROUTE_WAIT_MS: "1500",
  }, () => JSON.stringify({ providers: { p: { kind: "openai-chat", baseUrl: "http://127.0.0.1:9/v1", apiKeyEnv: "KEY" } }, models: [{ id: BYOK_MODEL, displayName: "BYOK", provider: "p", upstreamModel: "m" }] }));
  proxy = await startEdgeProxy(config, { log: silentLogger(), members: directory });
  alice = new ProxyTunnelAgent({ port: proxy.port, authorization: proxyAuthorization("alice-key", "alice") }, proxy.caCertPem);
  bob = new ProxyTunnelAgent({ port: proxy.port, authorization: proxyAuthorization("bob-key", "bob") }, proxy.caCertPem);
});

afterAll(async () => {
  await proxy?.stop();
  await upstream?.close();
  await adapter?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("proxy authentication", () => {
  it("answers 407 without a key or with a wrong key, for Cursor and other hosts alike", async () => {
    for (const target of ["api2.cursor.sh:443", `127.0.0.1:${upstream.port}`]) {
      const none = await connectThroughProxy({ port: proxy.port }, target);
      expect(none).toMatchObject({ kind: "refused", status: 407 });
      if (none.kind === "refused") expect(none.headers["proxy-authenticate"]).toMatch(/^Basic realm=/);
      const wrong = await connectThroughProxy({ port: proxy.port, authorization: proxyAuthorization("nope") }, target);
      expect(wrong).toMatchObject({ kind: "refused", status: 407 });
    }
  });
});

describe("TLS", () => {
  it("terminates Cursor hosts with a team-CA certificate, HTTP/1.1 only", async () => {
    const socket = await tlsThroughProxy({ port: proxy.port, authorization: proxyAuthorization("alice-key") }, "api2.cursor.sh", 443, proxy.caCertPem);
    expect(socket.alpnProtocol).toBe("http/1.1");
    expect(socket.getPeerX509Certificate()?.checkHost("api2.cursor.sh")).toBe("api2.cursor.sh");
    socket.destroy();
    // A client that does not trust the team CA refuses the connection.
    await expect(tlsThroughProxy({ port: proxy.port, authorization: proxyAuthorization("alice-key") }, "api2.cursor.sh", 443, pki.caPem)).rejects.toThrow();
  });

  it("tunnels every other host byte for byte: the client sees the origin's own certificate", async () => {
    upstream.handle((_req, res) => res.writeHead(200, { "content-type": "text/plain" }).end("from the origin"));
    const socket = await tlsThroughProxy({ port: proxy.port, authorization: proxyAuthorization("alice-key") }, "127.0.0.1", upstream.port, pki.caPem);
    expect(socket.getPeerX509Certificate()?.fingerprint256).toBe(new X509Certificate(pki.certPem).fingerprint256);
    socket.write("GET /plain HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n\r\n");
    const text = (await new Promise<Buffer>((resolve) => {
      const chunks: Buffer[] = [];
      socket.on("data", (c: Buffer) => chunks.push(c));
      socket.on("end", () => resolve(Buffer.concat(chunks)));
    })).toString();
    expect(text).toMatch(/^HTTP\/1\.1 200/);
    expect(text).toContain("\r\nfrom the origin\r\n");
  });
});

describe("pass-through to upstream", () => {
  it("forwards method, path, query, headers and body, and relays status, headers and body unchanged", async () => {
    upstream.handle((_req, res) => {
      res.writeHead(418, "Teapot Here", [["x-upstream", "yes"], ["set-cookie", "a=1"], ["set-cookie", "b=2"], ["content-type", "application/octet-stream"]].flat());
      res.end(Buffer.from([0, 1, 2, 255]));
    });
    const before = upstream.requests.length;
    const body = Buffer.from("binary\u0000body\u00ff", "latin1");
    const res = await request(alice, `${CURSOR}/aiserver.v1.DashboardService/GetMe?x=1&y=two`, {
      method: "PUT",
      headers: { authorization: "Bearer cursor-jwt", "x-cursor-checksum": "abc", "X-Mixed-Case": "v", "x-byok-member-id": "spoofed", "content-type": "application/proto" },
      body,
    });
    expect(res.status).toBe(418);
    expect(res.headers["x-upstream"]).toBe("yes");
    expect(res.headers["set-cookie"]).toEqual(["a=1", "b=2"]);
    expect(res.body).toEqual(Buffer.from([0, 1, 2, 255]));
    const seen = upstream.requests[before];
    expect(seen).toMatchObject({ method: "PUT", url: "/aiserver.v1.DashboardService/GetMe?x=1&y=two" });
    expect(seen?.body).toEqual(body);
    expect(seen?.headers).toMatchObject({ authorization: "Bearer cursor-jwt", "x-cursor-checksum": "abc", "x-mixed-case": "v", "content-type": "application/proto" });
    expect(seen?.rawHeaders).toContain("X-Mixed-Case");
    expect(seen?.headers["x-byok-member-id"]).toBeUndefined();
    expect(seen?.headers["proxy-authorization"]).toBeUndefined();
  });

  it("serves several requests on one intercepted connection", async () => {
    upstream.handle((req, res) => res.writeHead(200, { "content-type": "text/plain" }).end(`answer to ${req.url}`));
    const keepAlive = new ProxyTunnelAgent({ port: proxy.port, authorization: proxyAuthorization("alice-key") }, proxy.caCertPem, { keepAlive: true, maxSockets: 1 });
    const sockets = new Set<unknown>();
    keepAlive.on("free", (socket) => sockets.add(socket));
    try {
      for (const path of ["/one", "/two", "/three"]) {
        const res = await request(keepAlive, `${CURSOR}${path}`, { method: "GET" });
        expect(res.body.toString()).toBe(`answer to ${path}`);
      }
      expect(sockets.size).toBe(1);
    } finally {
      keepAlive.destroy();
    }
  });

  it("streams: the first chunk reaches the client before the upstream has finished", async () => {
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    let finished = false;
    upstream.handle(async (_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write("first chunk;");
      await released;
      res.end("second chunk");
      finished = true;
    });
    const res = await openStream(alice, `${CURSOR}/some/stream`, PROTO, Buffer.alloc(0));
    const first = await new Promise<Buffer>((resolve) => res.once("data", resolve));
    expect(first.toString()).toBe("first chunk;");
    expect(finished).toBe(false);
    const rest = readAll(res);
    release();
    expect((await rest).toString()).toBe("second chunk");
  });

  it("streams: the head reaches the client while the upstream has sent no body yet", async () => {
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    upstream.handle(async (_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream", "x-origin": "upstream" });
      res.flushHeaders();
      await released;
      res.end("late body");
    });
    const res = await openStream(alice, `${CURSOR}/some/stream`, PROTO, Buffer.alloc(0));
    expect(res.statusCode).toBe(200);
    expect(res.headers["x-origin"]).toBe("upstream");
    const body = readAll(res);
    release();
    expect((await body).toString()).toBe("late body");
  });

  it("turns an upstream failure into a plain HTTP error", async () => {
    upstream.handle((req) => req.socket.destroy());
    const res = await request(alice, `${CURSOR}/aiserver.v1.AiService/Anything`, { headers: PROTO, body: "x" });
    expect(res.status).toBe(502);
    expect(res.headers["content-type"]).toBe("application/json");
    expect(JSON.parse(res.body.toString())).toMatchObject({ code: "unavailable" });
  });
});

describe("agent runs", () => {
  it("sends both halves of a BYOK run to the adapter, with the member id", async () => {
    adapter.handle((req, res) => {
      if (req.url === "/agent.v1.AgentService/RunSSE") {
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.write(envelope(Buffer.from([0x0a, 0x02, 0x6a, 0x00])));
        res.end(envelope(Buffer.from("{}"), 2));
      } else {
        res.writeHead(200, { "content-type": "application/proto" }).end();
      }
    });
    const upstreamBefore = upstream.requests.length;
    const adapterBefore = adapter.requests.length;
    const sseBody = runSseBody("run-local-1");
    const sse = openStream(alice, `${CURSOR}/agent.v1.AgentService/RunSSE`, { ...STREAM, "x-byok-member-id": "spoofed" }, sseBody);
    const appendBytes = appendBody("run-local-1", 0n, runRequest(BYOK_MODEL, "conv-local-1"));
    const append = await request(alice, `${CURSOR}/aiserver.v1.BidiService/BidiAppend`, { headers: { ...PROTO, "x-byok-member-id": "spoofed" }, body: appendBytes });
    expect(append.status).toBe(200);
    const frames = await readAll(await sse);
    expect(frames).toEqual(Buffer.concat([envelope(Buffer.from([0x0a, 0x02, 0x6a, 0x00])), envelope(Buffer.from("{}"), 2)]));

    const seen = adapter.requests.slice(adapterBefore);
    expect(seen.map((r) => r.url).sort()).toEqual(["/agent.v1.AgentService/RunSSE", "/aiserver.v1.BidiService/BidiAppend"]);
    for (const r of seen) expect(r.headers["x-byok-member-id"]).toBe("member-alice");
    expect(seen.find((r) => r.url.endsWith("RunSSE"))?.body).toEqual(sseBody);
    expect(seen.find((r) => r.url.endsWith("BidiAppend"))?.body).toEqual(appendBytes);
    expect(upstream.requests.length).toBe(upstreamBefore);
  });

  it("sends a run on an official model upstream as a whole, byte-identical", async () => {
    upstream.handle((req, res) => {
      if (req.url === "/agent.v1.AgentService/RunSSE") {
        res.writeHead(200, { "content-type": "application/connect+proto" });
        res.write(envelope(Buffer.from("official-1")));
        res.end(envelope(Buffer.from("{}"), 2));
      } else {
        res.writeHead(200, { "content-type": "application/proto", "x-official": "1" }).end();
      }
    });
    const adapterBefore = adapter.requests.length;
    const upstreamBefore = upstream.requests.length;
    const sseBody = runSseBody("run-official-1");
    const sse = openStream(alice, `${CURSOR}/agent.v1.AgentService/RunSSE`, STREAM, sseBody);
    const first = gzipSync(appendBody("run-official-1", 0n, runRequest("claude-4-sonnet", "conv-official-1")));
    const second = appendBody("run-official-1", 1n, heartbeat);
    const [a0, a1] = await Promise.all([
      request(alice, `${CURSOR}/aiserver.v1.BidiService/BidiAppend`, { headers: { ...PROTO, "content-encoding": "gzip" }, body: first }),
      request(alice, `${CURSOR}/aiserver.v1.BidiService/BidiAppend`, { headers: PROTO, body: second }),
    ]);
    expect([a0.status, a1.status]).toEqual([200, 200]);
    expect(a0.headers["x-official"]).toBe("1");
    expect(await readAll(await sse)).toEqual(Buffer.concat([envelope(Buffer.from("official-1")), envelope(Buffer.from("{}"), 2)]));

    const seen = upstream.requests.slice(upstreamBefore);
    expect(seen.find((r) => r.url.endsWith("RunSSE"))?.body).toEqual(sseBody);
    const appends = seen.filter((r) => r.url.endsWith("BidiAppend"));
    expect(appends.map((r) => r.body).sort(Buffer.compare)).toEqual([first, second].sort(Buffer.compare));
    expect(appends.find((r) => r.body.equals(first))?.headers["content-encoding"]).toBe("gzip");
    for (const r of seen) expect(r.headers["x-byok-member-id"]).toBeUndefined();
    expect(adapter.requests.length).toBe(adapterBefore);
  });

  it("passes a client disconnect on RunSSE through to the adapter", async () => {
    let adapterSawClose = false;
    adapter.handle((req, res) => {
      if (req.url === "/agent.v1.AgentService/RunSSE") {
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.write(envelope(Buffer.from([0x0a, 0x02, 0x6a, 0x00])));
        res.on("close", () => (adapterSawClose = true));
      } else {
        res.writeHead(200, { "content-type": "application/proto" }).end();
      }
    });
    const append = await request(alice, `${CURSOR}/aiserver.v1.BidiService/BidiAppend`, { headers: PROTO, body: appendBody("run-local-gone", 0n, runRequest(BYOK_MODEL, "conv-gone")) });
    expect(append.status).toBe(200);
    const sse = await openStream(alice, `${CURSOR}/agent.v1.AgentService/RunSSE`, STREAM, runSseBody("run-local-gone"));
    await new Promise((resolve) => sse.once("data", resolve));
    expect(adapterSawClose).toBe(false);
    sse.destroy();
    await waitFor(() => adapterSawClose, "the adapter to see the RunSSE connection close");
  });

  it("answers 504 when no append decides a waiting RunSSE in time", async () => {
    const res = await request(alice, `${CURSOR}/agent.v1.AgentService/RunSSE`, { headers: STREAM, body: runSseBody("run-never-decided") });
    expect(res.status).toBe(504);
    expect(JSON.parse(res.body.toString())).toMatchObject({ code: "deadline_exceeded" });
  });

  it("does not let member B attach to member A's run or conversation", async () => {
    adapter.handle((_req, res) => res.writeHead(200, { "content-type": "application/proto" }).end());
    const ok = await request(alice, `${CURSOR}/aiserver.v1.BidiService/BidiAppend`, { headers: PROTO, body: appendBody("run-a", 0n, runRequest(BYOK_MODEL, "conv-a")) });
    expect(ok.status).toBe(200);
    const adapterBefore = adapter.requests.length;

    const sse = await request(bob, `${CURSOR}/agent.v1.AgentService/RunSSE`, { headers: STREAM, body: runSseBody("run-a") });
    expect(sse.status).toBe(403);
    const append = await request(bob, `${CURSOR}/aiserver.v1.BidiService/BidiAppend`, { headers: PROTO, body: appendBody("run-a", 1n, heartbeat) });
    expect(append.status).toBe(403);
    const conversation = await request(bob, `${CURSOR}/aiserver.v1.BidiService/BidiAppend`, { headers: PROTO, body: appendBody("run-b", 0n, runRequest(BYOK_MODEL, "conv-a")) });
    expect(conversation.status).toBe(403);
    expect(adapter.requests.length).toBe(adapterBefore);

    const own = await request(bob, `${CURSOR}/aiserver.v1.BidiService/BidiAppend`, { headers: PROTO, body: appendBody("run-b2", 0n, runRequest(BYOK_MODEL, "conv-b")) });
    expect(own.status).toBe(200);
    expect(adapter.requests.at(-1)?.headers["x-byok-member-id"]).toBe("member-bob");
  });
});

describe("model lists and server config", () => {
  const path = `${CURSOR}/aiserver.v1.AiService/AvailableModels`;
  const requestBody = Buffer.from(toBinary(aiserver.AvailableModelsRequestSchema, create(aiserver.AvailableModelsRequestSchema, { includeLongContextModels: true })));

  it("merges Cursor's official list with the BYOK models", async () => {
    upstream.handle((_req, res) => res.writeHead(200, { "content-type": "application/proto" }).end(modelList(["claude-4-sonnet", "gpt-5"])));
    adapter.handle((_req, res) => res.writeHead(200, { "content-type": "application/proto" }).end(modelList([BYOK_MODEL])));
    const adapterBefore = adapter.requests.length;
    const res = await request(alice, path, { headers: { ...PROTO, "accept-encoding": "gzip" }, body: requestBody });
    expect(res.status).toBe(200);
    const merged = fromBinary(aiserver.AvailableModelsResponseSchema, res.body);
    expect(merged.models.map((m) => m.name)).toEqual(["claude-4-sonnet", "gpt-5", BYOK_MODEL]);
    const asked = adapter.requests[adapterBefore];
    expect(asked?.body).toEqual(requestBody);
    expect(asked?.headers["x-byok-member-id"]).toBe("member-alice");
  });

  it("lists the BYOK models alone when upstream fails", async () => {
    adapter.handle((_req, res) => res.writeHead(200, { "content-type": "application/proto" }).end(modelList([BYOK_MODEL])));
    upstream.handle((_req, res) => res.writeHead(503, { "content-type": "application/json" }).end('{"code":"unavailable"}'));
    const down = await request(alice, path, { headers: PROTO, body: requestBody });
    expect(down.status).toBe(200);
    expect(fromBinary(aiserver.AvailableModelsResponseSchema, down.body).models.map((m) => m.name)).toEqual([BYOK_MODEL]);

    upstream.handle((req) => req.socket.destroy());
    const gone = await request(alice, path, { headers: PROTO, body: requestBody });
    expect(fromBinary(aiserver.AvailableModelsResponseSchema, gone.body).models.map((m) => m.name)).toEqual([BYOK_MODEL]);
  });

  it("passes GetServerConfig on with HTTP/2 forced off, and upstream errors unchanged", async () => {
    const official = create(aiserver.GetServerConfigResponseSchema, { configVersion: "cursor-v9", http2Config: aiserver.Http2Config.FORCE_ALL_ENABLED });
    upstream.handle((_req, res) => res.writeHead(200, { "content-type": "application/proto" }).end(Buffer.from(toBinary(aiserver.GetServerConfigResponseSchema, official))));
    const res = await request(alice, `${CURSOR}/aiserver.v1.ServerConfigService/GetServerConfig`, { headers: PROTO, body: Buffer.alloc(0) });
    const config = fromBinary(aiserver.GetServerConfigResponseSchema, res.body);
    expect(config).toMatchObject({ configVersion: "cursor-v9", http2Config: aiserver.Http2Config.FORCE_ALL_DISABLED });

    upstream.handle((_req, res) => res.writeHead(401, { "content-type": "application/json" }).end('{"code":"unauthenticated"}'));
    const denied = await request(alice, `${CURSOR}/aiserver.v1.AiService/GetServerConfig`, { headers: PROTO, body: Buffer.alloc(0) });
    expect(denied.status).toBe(401);
    expect(denied.body.toString()).toBe('{"code":"unauthenticated"}');
  });
});

describe("plain HTTP on the proxy port", () => {
  it("serves a health probe and the team CA certificate (the file members install), without a key", async () => {
    const health = await fetch(`${proxy.url}/healthz`);
    expect(health.status).toBe(200);
    const ca = await fetch(`${proxy.url}/ca.crt`);
    expect(ca.status).toBe(200);
    expect(ca.headers.get("content-type")).toBe("application/x-pem-file");
    const pem = await ca.text();
    expect(pem).toBe(proxy.caCertPem);
    expect(readFileSync(proxy.caCertFile, "utf8")).toBe(pem);
    expect(new X509Certificate(pem).ca).toBe(true);
  });

  it("refuses other plain requests: 501 for a proxied http:// URL, 404 for anything else", async () => {
    const forward = await new Promise<number>((resolve, reject) => {
      const req = http.request({ host: "127.0.0.1", port: proxy.port, path: "http://example.invalid/", method: "GET" }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on("error", reject);
      req.end();
    });
    expect(forward).toBe(501);
    expect((await fetch(`${proxy.url}/nothing-here`)).status).toBe(404);
  });
});
