/**
 * The edge proxy forwarding over real sockets (test-support/proxy-world.ts):
 * pass-through to Cursor's upstream, streamed and unchanged, and both halves
 * of agent runs routed by model, bound to the member that started them.
 */
import { describe, expect, it } from "vitest";
import https from "node:https";
import type { IncomingMessage } from "node:http";
import { gzipSync } from "node:zlib";
import { create, toBinary } from "@bufbuild/protobuf";
import { agent, aiserver } from "@byok/cursor-protocol";
import { waitFor } from "@byok/test-support/infra";
import { ProxyTunnelAgent, proxyAuthorization, request } from "./test-support/proxy-client.ts";
import { BYOK_MODEL, CURSOR, PROTO, useProxyWorld } from "./test-support/proxy-world.ts";

const world = useProxyWorld();

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
const STREAM = { "content-type": "application/connect+proto", "connect-protocol-version": "1" };

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

describe("pass-through to upstream", () => {
  it("forwards method, path, query, headers and body, and relays status, headers and body unchanged", async () => {
    world.upstream.handle((_req, res) => {
      res.writeHead(418, "Teapot Here", [["x-upstream", "yes"], ["set-cookie", "a=1"], ["set-cookie", "b=2"], ["content-type", "application/octet-stream"]].flat());
      res.end(Buffer.from([0, 1, 2, 255]));
    });
    const before = world.upstream.requests.length;
    const body = Buffer.from("binary\u0000body\u00ff", "latin1");
    const res = await request(world.alice, `${CURSOR}/aiserver.v1.DashboardService/GetMe?x=1&y=two`, {
      method: "PUT",
      headers: { authorization: "Bearer cursor-jwt", "x-cursor-checksum": "abc", "X-Mixed-Case": "v", "x-byok-member-id": "spoofed", "content-type": "application/proto" },
      body,
    });
    expect(res.status).toBe(418);
    expect(res.headers["x-upstream"]).toBe("yes");
    expect(res.headers["set-cookie"]).toEqual(["a=1", "b=2"]);
    expect(res.body).toEqual(Buffer.from([0, 1, 2, 255]));
    const seen = world.upstream.requests[before];
    expect(seen).toMatchObject({ method: "PUT", url: "/aiserver.v1.DashboardService/GetMe?x=1&y=two" });
    expect(seen?.body).toEqual(body);
    expect(seen?.headers).toMatchObject({ authorization: "Bearer cursor-jwt", "x-cursor-checksum": "abc", "x-mixed-case": "v", "content-type": "application/proto" });
    expect(seen?.rawHeaders).toContain("X-Mixed-Case");
    expect(seen?.headers["x-byok-member-id"]).toBeUndefined();
    expect(seen?.headers["proxy-authorization"]).toBeUndefined();
  });

  it("serves several requests on one intercepted connection", async () => {
    world.upstream.handle((req, res) => res.writeHead(200, { "content-type": "text/plain" }).end(`answer to ${req.url}`));
    const keepAlive = new ProxyTunnelAgent({ port: world.proxy.port, authorization: proxyAuthorization("alice-key") }, world.proxy.caCertPem, { keepAlive: true, maxSockets: 1 });
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
    world.upstream.handle(async (_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write("first chunk;");
      await released;
      res.end("second chunk");
      finished = true;
    });
    const res = await openStream(world.alice, `${CURSOR}/some/stream`, PROTO, Buffer.alloc(0));
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
    world.upstream.handle(async (_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream", "x-origin": "upstream" });
      res.flushHeaders();
      await released;
      res.end("late body");
    });
    const res = await openStream(world.alice, `${CURSOR}/some/stream`, PROTO, Buffer.alloc(0));
    expect(res.statusCode).toBe(200);
    expect(res.headers["x-origin"]).toBe("upstream");
    const body = readAll(res);
    release();
    expect((await body).toString()).toBe("late body");
  });

  it("relays trailers, and leaves out the answer's hop-by-hop headers and those its Connection names", async () => {
    world.upstream.handle((_req, res) => {
      res.writeHead(200, { "content-type": "application/grpc", connection: "x-hop, keep-alive", "x-hop": "1", "keep-alive": "timeout=5", trailer: "grpc-status", "x-kept": "2" });
      res.write("body");
      res.addTrailers({ "grpc-status": "0" });
      res.end();
    });
    const res = await openStream(world.alice, `${CURSOR}/some/trailers`, PROTO, Buffer.from("x"));
    expect((await readAll(res)).toString()).toBe("body");
    expect(res.trailers).toMatchObject({ "grpc-status": "0" });
    expect(res.headers["x-kept"]).toBe("2");
    expect(res.headers["x-hop"]).toBeUndefined();
    expect(res.headers["keep-alive"]).toBeUndefined();
  });

  it("sends a request body of unknown length (chunked from the client) to the origin whole", async () => {
    world.upstream.handle((_req, res) => res.writeHead(200, { "content-type": "text/plain" }).end("ok"));
    const before = world.upstream.requests.length;
    const answer = await new Promise<IncomingMessage>((resolve, reject) => {
      const req = https.request(`${CURSOR}/some/upload`, { method: "POST", headers: PROTO, agent: world.alice }, resolve);
      req.on("error", reject);
      req.write("part one;");
      setImmediate(() => req.end("part two"));
    });
    expect((await readAll(answer)).toString()).toBe("ok");
    expect(world.upstream.requests[before]?.body.toString()).toBe("part one;part two");
  });

  it("breaks the client's answer off when the origin breaks off after the head, instead of ending it cleanly", async () => {
    world.upstream.handle((_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write("first chunk;", () => setImmediate(() => res.socket?.destroy()));
    });
    const res = await openStream(world.alice, `${CURSOR}/some/broken`, PROTO, Buffer.alloc(0));
    expect(res.statusCode).toBe(200);
    await expect(readAll(res)).rejects.toThrow();
  });

  it("turns an upstream failure into a plain HTTP error", async () => {
    world.upstream.handle((req) => req.socket.destroy());
    const res = await request(world.alice, `${CURSOR}/aiserver.v1.AiService/Anything`, { headers: PROTO, body: "x" });
    expect(res.status).toBe(502);
    expect(res.headers["content-type"]).toBe("application/json");
    expect(JSON.parse(res.body.toString())).toMatchObject({ code: "unavailable" });
  });
});

describe("agent runs", () => {
  it("sends both halves of a BYOK run to the adapter, with the member id", async () => {
    world.adapter.handle((req, res) => {
      if (req.url === "/agent.v1.AgentService/RunSSE") {
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.write(envelope(Buffer.from([0x0a, 0x02, 0x6a, 0x00])));
        res.end(envelope(Buffer.from("{}"), 2));
      } else {
        res.writeHead(200, { "content-type": "application/proto" }).end();
      }
    });
    const upstreamBefore = world.upstream.requests.length;
    const adapterBefore = world.adapter.requests.length;
    const sseBody = runSseBody("run-local-1");
    const sse = openStream(world.alice, `${CURSOR}/agent.v1.AgentService/RunSSE`, { ...STREAM, "x-byok-member-id": "spoofed" }, sseBody);
    const appendBytes = appendBody("run-local-1", 0n, runRequest(BYOK_MODEL, "conv-local-1"));
    const append = await request(world.alice, `${CURSOR}/aiserver.v1.BidiService/BidiAppend`, { headers: { ...PROTO, "x-byok-member-id": "spoofed" }, body: appendBytes });
    expect(append.status).toBe(200);
    const frames = await readAll(await sse);
    expect(frames).toEqual(Buffer.concat([envelope(Buffer.from([0x0a, 0x02, 0x6a, 0x00])), envelope(Buffer.from("{}"), 2)]));

    const seen = world.adapter.requests.slice(adapterBefore);
    expect(seen.map((r) => r.url).sort()).toEqual(["/agent.v1.AgentService/RunSSE", "/aiserver.v1.BidiService/BidiAppend"]);
    for (const r of seen) expect(r.headers["x-byok-member-id"]).toBe("member-alice");
    expect(seen.find((r) => r.url.endsWith("RunSSE"))?.body).toEqual(sseBody);
    expect(seen.find((r) => r.url.endsWith("BidiAppend"))?.body).toEqual(appendBytes);
    expect(world.upstream.requests.length).toBe(upstreamBefore);
  });

  it("sends a run on an official model upstream as a whole, byte-identical", async () => {
    world.upstream.handle((req, res) => {
      if (req.url === "/agent.v1.AgentService/RunSSE") {
        res.writeHead(200, { "content-type": "application/connect+proto" });
        res.write(envelope(Buffer.from("official-1")));
        res.end(envelope(Buffer.from("{}"), 2));
      } else {
        res.writeHead(200, { "content-type": "application/proto", "x-official": "1" }).end();
      }
    });
    const adapterBefore = world.adapter.requests.length;
    const upstreamBefore = world.upstream.requests.length;
    const sseBody = runSseBody("run-official-1");
    const sse = openStream(world.alice, `${CURSOR}/agent.v1.AgentService/RunSSE`, STREAM, sseBody);
    const first = gzipSync(appendBody("run-official-1", 0n, runRequest("claude-4-sonnet", "conv-official-1")));
    const second = appendBody("run-official-1", 1n, heartbeat);
    const [a0, a1] = await Promise.all([
      request(world.alice, `${CURSOR}/aiserver.v1.BidiService/BidiAppend`, { headers: { ...PROTO, "content-encoding": "gzip" }, body: first }),
      request(world.alice, `${CURSOR}/aiserver.v1.BidiService/BidiAppend`, { headers: PROTO, body: second }),
    ]);
    expect([a0.status, a1.status]).toEqual([200, 200]);
    expect(a0.headers["x-official"]).toBe("1");
    expect(await readAll(await sse)).toEqual(Buffer.concat([envelope(Buffer.from("official-1")), envelope(Buffer.from("{}"), 2)]));

    const seen = world.upstream.requests.slice(upstreamBefore);
    expect(seen.find((r) => r.url.endsWith("RunSSE"))?.body).toEqual(sseBody);
    const appends = seen.filter((r) => r.url.endsWith("BidiAppend"));
    expect(appends.map((r) => r.body).sort(Buffer.compare)).toEqual([first, second].sort(Buffer.compare));
    expect(appends.find((r) => r.body.equals(first))?.headers["content-encoding"]).toBe("gzip");
    for (const r of seen) expect(r.headers["x-byok-member-id"]).toBeUndefined();
    expect(world.adapter.requests.length).toBe(adapterBefore);
  });

  it("passes a client disconnect on RunSSE through to the adapter", async () => {
    let adapterSawClose = false;
    world.adapter.handle((req, res) => {
      if (req.url === "/agent.v1.AgentService/RunSSE") {
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.write(envelope(Buffer.from([0x0a, 0x02, 0x6a, 0x00])));
        res.on("close", () => (adapterSawClose = true));
      } else {
        res.writeHead(200, { "content-type": "application/proto" }).end();
      }
    });
    const append = await request(world.alice, `${CURSOR}/aiserver.v1.BidiService/BidiAppend`, { headers: PROTO, body: appendBody("run-local-gone", 0n, runRequest(BYOK_MODEL, "conv-gone")) });
    expect(append.status).toBe(200);
    const sse = await openStream(world.alice, `${CURSOR}/agent.v1.AgentService/RunSSE`, STREAM, runSseBody("run-local-gone"));
    await new Promise((resolve) => sse.once("data", resolve));
    expect(adapterSawClose).toBe(false);
    sse.destroy();
    await waitFor(() => adapterSawClose, "the adapter to see the RunSSE connection close");
  });

  it("answers 504 when no append decides a waiting RunSSE in time", async () => {
    const res = await request(world.alice, `${CURSOR}/agent.v1.AgentService/RunSSE`, { headers: STREAM, body: runSseBody("run-never-decided") });
    expect(res.status).toBe(504);
    expect(JSON.parse(res.body.toString())).toMatchObject({ code: "deadline_exceeded" });
  });

  it("does not let member B attach to member A's run or conversation", async () => {
    world.adapter.handle((_req, res) => res.writeHead(200, { "content-type": "application/proto" }).end());
    const ok = await request(world.alice, `${CURSOR}/aiserver.v1.BidiService/BidiAppend`, { headers: PROTO, body: appendBody("run-a", 0n, runRequest(BYOK_MODEL, "conv-a")) });
    expect(ok.status).toBe(200);
    const adapterBefore = world.adapter.requests.length;

    const sse = await request(world.bob, `${CURSOR}/agent.v1.AgentService/RunSSE`, { headers: STREAM, body: runSseBody("run-a") });
    expect(sse.status).toBe(403);
    const append = await request(world.bob, `${CURSOR}/aiserver.v1.BidiService/BidiAppend`, { headers: PROTO, body: appendBody("run-a", 1n, heartbeat) });
    expect(append.status).toBe(403);
    const conversation = await request(world.bob, `${CURSOR}/aiserver.v1.BidiService/BidiAppend`, { headers: PROTO, body: appendBody("run-b", 0n, runRequest(BYOK_MODEL, "conv-a")) });
    expect(conversation.status).toBe(403);
    expect(world.adapter.requests.length).toBe(adapterBefore);

    const own = await request(world.bob, `${CURSOR}/aiserver.v1.BidiService/BidiAppend`, { headers: PROTO, body: appendBody("run-b2", 0n, runRequest(BYOK_MODEL, "conv-b")) });
    expect(own.status).toBe(200);
    expect(world.adapter.requests.at(-1)?.headers["x-byok-member-id"]).toBe("member-bob");
  });
});
