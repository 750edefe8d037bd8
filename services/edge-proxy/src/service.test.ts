/**
 * The edge proxy end to end over real sockets (test-support/proxy-world.ts):
 * proxy authentication, TLS termination and tunnelling, the model list and
 * server config it answers itself, and plain HTTP on its port. Forwarding
 * (pass-through and agent runs) is in forwarding.test.ts; the cross-service
 * test (tests/edge-proxy.test.ts) uses the store.
 */
import { describe, expect, it } from "vitest";
import http from "node:http";
import { readFileSync } from "node:fs";
import { X509Certificate } from "node:crypto";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { aiserver } from "@byok/cursor-protocol";
import { connectThroughProxy, proxyAuthorization, request, tlsThroughProxy } from "./test-support/proxy-client.ts";
import { BYOK_MODEL, CURSOR, PROTO, useProxyWorld } from "./test-support/proxy-world.ts";

const world = useProxyWorld();

function modelList(names: string[]): Buffer {
  const message = create(aiserver.AvailableModelsResponseSchema, { modelNames: names, models: names.map((name) => ({ name, defaultOn: true })) });
  return Buffer.from(toBinary(aiserver.AvailableModelsResponseSchema, message));
}

describe("proxy authentication", () => {
  it("answers 407 without a key or with a wrong key, for Cursor and other hosts alike", async () => {
    for (const target of ["api2.cursor.sh:443", `127.0.0.1:${world.upstream.port}`]) {
      const none = await connectThroughProxy({ port: world.proxy.port }, target);
      expect(none).toMatchObject({ kind: "refused", status: 407 });
      if (none.kind === "refused") expect(none.headers["proxy-authenticate"]).toMatch(/^Basic realm=/);
      const wrong = await connectThroughProxy({ port: world.proxy.port, authorization: proxyAuthorization("nope") }, target);
      expect(wrong).toMatchObject({ kind: "refused", status: 407 });
    }
  });
});

describe("TLS", () => {
  it("terminates Cursor hosts with a team-CA certificate, HTTP/1.1 only", async () => {
    const socket = await tlsThroughProxy({ port: world.proxy.port, authorization: proxyAuthorization("alice-key") }, "api2.cursor.sh", 443, world.proxy.caCertPem);
    expect(socket.alpnProtocol).toBe("http/1.1");
    expect(socket.getPeerX509Certificate()?.checkHost("api2.cursor.sh")).toBe("api2.cursor.sh");
    socket.destroy();
    // A client that does not trust the team CA refuses the connection.
    await expect(tlsThroughProxy({ port: world.proxy.port, authorization: proxyAuthorization("alice-key") }, "api2.cursor.sh", 443, world.pki.caPem)).rejects.toThrow();
  });

  it("tunnels every other host byte for byte: the client sees the origin's own certificate", async () => {
    world.upstream.handle((_req, res) => res.writeHead(200, { "content-type": "text/plain" }).end("from the origin"));
    const socket = await tlsThroughProxy({ port: world.proxy.port, authorization: proxyAuthorization("alice-key") }, "127.0.0.1", world.upstream.port, world.pki.caPem);
    expect(socket.getPeerX509Certificate()?.fingerprint256).toBe(new X509Certificate(world.pki.certPem).fingerprint256);
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

describe("model lists and server config", () => {
  const path = `${CURSOR}/aiserver.v1.AiService/AvailableModels`;
  const requestBody = Buffer.from(toBinary(aiserver.AvailableModelsRequestSchema, create(aiserver.AvailableModelsRequestSchema, { includeLongContextModels: true })));

  it("merges Cursor's official list with the BYOK models", async () => {
    world.upstream.handle((_req, res) => res.writeHead(200, { "content-type": "application/proto" }).end(modelList(["claude-4-sonnet", "gpt-5"])));
    world.adapter.handle((_req, res) => res.writeHead(200, { "content-type": "application/proto" }).end(modelList([BYOK_MODEL])));
    const adapterBefore = world.adapter.requests.length;
    const res = await request(world.alice, path, { headers: { ...PROTO, "accept-encoding": "gzip" }, body: requestBody });
    expect(res.status).toBe(200);
    const merged = fromBinary(aiserver.AvailableModelsResponseSchema, res.body);
    expect(merged.models.map((m) => m.name)).toEqual(["claude-4-sonnet", "gpt-5", BYOK_MODEL]);
    const asked = world.adapter.requests[adapterBefore];
    expect(asked?.body).toEqual(requestBody);
    expect(asked?.headers["x-byok-member-id"]).toBe("member-alice");
  });

  it("lists the BYOK models alone when upstream fails", async () => {
    world.adapter.handle((_req, res) => res.writeHead(200, { "content-type": "application/proto" }).end(modelList([BYOK_MODEL])));
    world.upstream.handle((_req, res) => res.writeHead(503, { "content-type": "application/json" }).end('{"code":"unavailable"}'));
    const down = await request(world.alice, path, { headers: PROTO, body: requestBody });
    expect(down.status).toBe(200);
    expect(fromBinary(aiserver.AvailableModelsResponseSchema, down.body).models.map((m) => m.name)).toEqual([BYOK_MODEL]);

    world.upstream.handle((req) => req.socket.destroy());
    const gone = await request(world.alice, path, { headers: PROTO, body: requestBody });
    expect(fromBinary(aiserver.AvailableModelsResponseSchema, gone.body).models.map((m) => m.name)).toEqual([BYOK_MODEL]);
  });

  it("passes GetServerConfig on with HTTP/2 forced off, and upstream errors unchanged", async () => {
    const official = create(aiserver.GetServerConfigResponseSchema, { configVersion: "cursor-v9", http2Config: aiserver.Http2Config.FORCE_ALL_ENABLED });
    world.upstream.handle((_req, res) => res.writeHead(200, { "content-type": "application/proto" }).end(Buffer.from(toBinary(aiserver.GetServerConfigResponseSchema, official))));
    const res = await request(world.alice, `${CURSOR}/aiserver.v1.ServerConfigService/GetServerConfig`, { headers: PROTO, body: Buffer.alloc(0) });
    const config = fromBinary(aiserver.GetServerConfigResponseSchema, res.body);
    expect(config).toMatchObject({ configVersion: "cursor-v9", http2Config: aiserver.Http2Config.FORCE_ALL_DISABLED });

    world.upstream.handle((_req, res) => res.writeHead(401, { "content-type": "application/json" }).end('{"code":"unauthenticated"}'));
    const denied = await request(world.alice, `${CURSOR}/aiserver.v1.AiService/GetServerConfig`, { headers: PROTO, body: Buffer.alloc(0) });
    expect(denied.status).toBe(401);
    expect(denied.body.toString()).toBe('{"code":"unauthenticated"}');
  });
});

describe("plain HTTP on the proxy port", () => {
  it("serves a health probe and the team CA certificate (the file members install), without a key", async () => {
    const health = await fetch(`${world.proxy.url}/healthz`);
    expect(health.status).toBe(200);
    const ca = await fetch(`${world.proxy.url}/ca.crt`);
    expect(ca.status).toBe(200);
    expect(ca.headers.get("content-type")).toBe("application/x-pem-file");
    const pem = await ca.text();
    expect(pem).toBe(world.proxy.caCertPem);
    expect(readFileSync(world.proxy.caCertFile, "utf8")).toBe(pem);
    expect(new X509Certificate(pem).ca).toBe(true);
  });

  it("refuses other plain requests: 501 for a proxied http:// URL, 404 for anything else", async () => {
    const forward = await new Promise<number>((resolve, reject) => {
      const req = http.request({ host: "127.0.0.1", port: world.proxy.port, path: "http://example.invalid/", method: "GET" }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on("error", reject);
      req.end();
    });
    expect(forward).toBe(501);
    expect((await fetch(`${world.proxy.url}/nothing-here`)).status).toBe(404);
  });
});
