/**
 * The edge proxy with its real neighbours: member keys created and revoked with
 * the admin command in the store (Postgres over NATS), the cursor adapter as the
 * owner of the BYOK model list, and an HTTPS stand-in for Cursor's upstream.
 * (A whole BYOK turn through the proxy is in edge-spine.test.ts.)
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import https from "node:https";
import type { IncomingMessage } from "node:http";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { agent, aiserver } from "@byok/cursor-protocol";
import { busNames } from "@byok/contracts";
import { connectNats, silentLogger, type NatsConnection } from "@byok/platform";
import { loadConfig as loadStoreConfig } from "../services/store/src/config.ts";
import { startStore } from "../services/store/src/service.ts";
import { loadConfig as loadAdapterConfig } from "../services/cursor-adapter/src/config.ts";
import { startCursorAdapter, type CursorAdapter } from "../services/cursor-adapter/src/service.ts";
import { loadConfig as loadProxyConfig } from "../services/edge-proxy/src/config.ts";
import { startEdgeProxy, type EdgeProxy } from "../services/edge-proxy/src/service.ts";
import { StoreClient } from "@byok/store-client";
import type { AdminStore } from "../services/admin/src/actions/admin-actions.ts";
import { runAdmin, type AdminRun } from "../services/admin/src/testing/admin-cli.ts";
import { ProxyTunnelAgent, connectThroughProxy, proxyAuthorization, request } from "../services/edge-proxy/src/test-support/proxy-client.ts";
import { makeOriginPki, startHttpsOrigin, type TestOrigin } from "../services/edge-proxy/src/test-support/origins.ts";
import { createTestBus, createTestDatabase, waitFor, type TestBus, type TestDatabase } from "@byok/test-support/infra";
import { buildRunRequest, emptyConversationState } from "@byok/test-support/fake-cursor";

const BYOK_MODEL = "team-sonnet";
const CURSOR = "https://api2.cursor.sh";
const PROTO = { "content-type": "application/proto", "connect-protocol-version": "1" };

let db: TestDatabase;
let bus: TestBus;
let dir: string;
let nc: NatsConnection;
let members: AdminStore;
let upstream: TestOrigin;
let adapter: CursorAdapter;
let proxy: EdgeProxy;
const stops: Array<() => Promise<void>> = [];

/** Runs the admin command and returns what it printed. */
function admin(...args: string[]): Promise<AdminRun> {
  return runAdmin(members, args);
}

async function createMember(name: string): Promise<{ memberId: string; key: string }> {
  const { code, out } = await admin("create", name);
  expect(code).toBe(0);
  const memberId = /member (\S+) \(/.exec(out)?.[1];
  const key = /gateway key \(shown once, store it now\): (\S+)/.exec(out)?.[1];
  if (!memberId || !key) throw new Error(`unexpected admin output: ${out}`);
  return { memberId, key };
}

function modelNames(bytes: Buffer): string[] {
  return fromBinary(aiserver.AvailableModelsResponseSchema, bytes).models.map((m) => m.name);
}

beforeAll(async () => {
  db = await createTestDatabase();
  bus = createTestBus();
  dir = await mkdtemp(join(tmpdir(), "edge-proxy-it-"));
  const gatewayConfig = join(dir, "gateway.json");
  await writeFile(
    gatewayConfig,
    JSON.stringify({
      providers: { team: { kind: "anthropic", baseUrl: "http://127.0.0.1:9", apiKeyEnv: "UNUSED_KEY" } },
      models: [{ id: BYOK_MODEL, displayName: "Team Sonnet", provider: "team", upstreamModel: "claude-sonnet" }],
    }),
  );
  const busEnv = { NATS_URL: bus.natsUrl, BUS_PREFIX: bus.prefix, LOG_LEVEL: "silent" };
  nc = await connectNats(bus.natsUrl, "edge-proxy-test", silentLogger());
  stops.push(() => nc.close());
  members = new StoreClient(nc, busNames(bus.prefix), { timeoutMs: 10_000 });

  const store = await startStore(loadStoreConfig({ ...busEnv, DATABASE_URL: db.url }), { log: silentLogger() });
  stops.push(() => store.stop());
  adapter = await startCursorAdapter(loadAdapterConfig({ ...busEnv, PORT: "0", GATEWAY_CONFIG: gatewayConfig }), { log: silentLogger() });
  stops.push(() => adapter.stop());

  const pki = await makeOriginPki();
  await writeFile(join(dir, "upstream-ca.pem"), pki.caPem);
  upstream = await startHttpsOrigin(pki, (_req, res) => res.writeHead(404).end());
  stops.push(() => upstream.close());

  proxy = await startEdgeProxy(
    loadProxyConfig({
      ...busEnv,
      PROXY_PORT: "0",
      ADAPTER_URL: adapter.url,
      UPSTREAM_ORIGIN: upstream.url,
      UPSTREAM_CA_FILE: join(dir, "upstream-ca.pem"),
      CA_DIR: join(dir, "ca"),
      GATEWAY_CONFIG: gatewayConfig,
      MEMBER_CACHE_MS: "200",
    }),
    { log: silentLogger() },
  );
  stops.push(() => proxy.stop());
});

afterAll(async () => {
  for (const stop of stops.reverse()) await stop();
  await bus?.cleanup();
  await db?.drop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("edge proxy with the store and the cursor adapter", () => {
  it("admits exactly the members the admin command created, until they are revoked", async () => {
    const carol = await createMember("carol");
    const target = "api2.cursor.sh:443";
    const admitted = await connectThroughProxy({ port: proxy.port, authorization: proxyAuthorization(carol.key, "carol") }, target);
    expect(admitted.kind).toBe("established");
    if (admitted.kind === "established") admitted.socket.destroy();
    expect(await connectThroughProxy({ port: proxy.port, authorization: proxyAuthorization(`${carol.key}x`, "carol") }, target)).toMatchObject({ status: 407 });

    expect((await admin("list")).out).toContain(`${carol.memberId}\tcarol`);
    expect((await admin("revoke", carol.memberId)).code).toBe(0);
    // Within MEMBER_CACHE_MS the revoked key stops working.
    await waitFor(async () => {
      const outcome = await connectThroughProxy({ port: proxy.port, authorization: proxyAuthorization(carol.key, "carol") }, target);
      if (outcome.kind === "established") outcome.socket.destroy();
      return outcome.kind === "refused" && outcome.status === 407;
    }, "revoked key refused", 5_000);
    expect((await admin("revoke", "no-such-member")).code).toBe(1);
  });

  it("merges Cursor's model list with the adapter's BYOK models, and lists BYOK alone when upstream is down", async () => {
    const alice = await createMember("alice");
    const client = new ProxyTunnelAgent({ port: proxy.port, authorization: proxyAuthorization(alice.key, "alice") }, proxy.caCertPem);
    const official = create(aiserver.AvailableModelsResponseSchema, { modelNames: ["gpt-5"], models: [{ name: "gpt-5", defaultOn: true }] });
    upstream.handle((_req, res) => res.writeHead(200, { "content-type": "application/proto" }).end(Buffer.from(toBinary(aiserver.AvailableModelsResponseSchema, official))));
    const body = Buffer.from(toBinary(aiserver.AvailableModelsRequestSchema, create(aiserver.AvailableModelsRequestSchema, {})));

    const merged = await request(client, `${CURSOR}/aiserver.v1.AiService/AvailableModels`, { headers: PROTO, body });
    expect(merged.status).toBe(200);
    expect(modelNames(merged.body)).toEqual(["gpt-5", BYOK_MODEL]);

    upstream.handle((_req, res) => res.writeHead(500).end());
    const alone = await request(client, `${CURSOR}/aiserver.v1.AiService/AvailableModels`, { headers: PROTO, body });
    expect(alone.status).toBe(200);
    expect(modelNames(alone.body)).toEqual([BYOK_MODEL]);

    const usable = await request(client, `${CURSOR}/agent.v1.AgentService/GetUsableModels`, { headers: PROTO, body: Buffer.alloc(0) });
    expect(fromBinary(agent.GetUsableModelsResponseSchema, usable.body).models.map((m) => m.modelId)).toEqual([BYOK_MODEL]);
  });

  it("streams a BYOK run's RunSSE from the adapter through the proxy", async () => {
    const dana = await createMember("dana");
    const client = new ProxyTunnelAgent({ port: proxy.port, authorization: proxyAuthorization(dana.key, "dana") }, proxy.caCertPem);
    const requestId = "req-dana-1";
    const id = Buffer.from(toBinary(agent.BidiRequestIdSchema, create(agent.BidiRequestIdSchema, { requestId })));
    const upstreamBefore = upstream.requests.length;
    const sse = new Promise<IncomingMessage>((resolve, reject) => {
      const req = https.request(`${CURSOR}/agent.v1.AgentService/RunSSE`, { method: "POST", headers: { ...PROTO, "content-type": "application/connect+proto" }, agent: client }, resolve);
      req.on("error", reject);
      req.end(Buffer.concat([Buffer.from([0, 0, 0, 0, id.length]), id]));
    });
    const run = buildRunRequest({
      conversationId: "conv-dana-1",
      conversationState: emptyConversationState(),
      model: { via: "requested_model", modelId: BYOK_MODEL },
      action: { kind: "user_message", text: "hello" },
    });
    const data = Buffer.from(toBinary(agent.AgentClientMessageSchema, run)).toString("hex");
    const appendBody = Buffer.from(toBinary(aiserver.BidiAppendRequestSchema, create(aiserver.BidiAppendRequestSchema, { requestId: { requestId }, appendSeqno: 0n, data })));
    const appended = await request(client, `${CURSOR}/aiserver.v1.BidiService/BidiAppend`, { headers: PROTO, body: appendBody });
    expect(appended.status).toBe(200);
    const res = await sse;
    expect(res.statusCode).toBe(200);
    // The adapter opens every RunSSE with a heartbeat frame (cursor-agent-protocol.md §13).
    const first = await new Promise<Buffer>((resolve) => res.once("data", resolve));
    expect(first.subarray(0, 9).toString("hex")).toBe("00000000040a026a00");
    res.destroy();
    expect(upstream.requests.length).toBe(upstreamBefore);
  });

  it("keeps member B off member A's run and conversation, while A's own appends reach the adapter", async () => {
    const alice = await createMember("alice-2");
    const bob = await createMember("bob");
    const asAlice = new ProxyTunnelAgent({ port: proxy.port, authorization: proxyAuthorization(alice.key, "alice") }, proxy.caCertPem);
    const asBob = new ProxyTunnelAgent({ port: proxy.port, authorization: proxyAuthorization(bob.key, "bob") }, proxy.caCertPem);
    const append = (requestId: string, seqno: bigint, message: agent.AgentClientMessage): Buffer =>
      Buffer.from(
        toBinary(
          aiserver.BidiAppendRequestSchema,
          create(aiserver.BidiAppendRequestSchema, { requestId: { requestId }, appendSeqno: seqno, data: Buffer.from(toBinary(agent.AgentClientMessageSchema, message)).toString("hex") }),
        ),
      );
    // A run_request the adapter rejects (no action) proves the append reached the adapter: its Connect error comes back.
    const invalid = create(agent.AgentClientMessageSchema, { message: { case: "runRequest", value: { requestedModel: { modelId: BYOK_MODEL }, conversationId: "conv-alice", conversationState: {} } } });
    const first = await request(asAlice, `${CURSOR}/aiserver.v1.BidiService/BidiAppend`, { headers: PROTO, body: append("req-alice", 0n, invalid) });
    expect(first.status).toBe(400);
    expect(JSON.parse(first.body.toString())).toMatchObject({ code: "invalid_argument", message: expect.stringMatching(/action/) });

    const id = Buffer.from(toBinary(agent.BidiRequestIdSchema, create(agent.BidiRequestIdSchema, { requestId: "req-alice" })));
    const runSse = Buffer.concat([Buffer.from([0, 0, 0, 0, id.length]), id]);
    const attach = await request(asBob, `${CURSOR}/agent.v1.AgentService/RunSSE`, { headers: { ...PROTO, "content-type": "application/connect+proto" }, body: runSse });
    expect(attach.status).toBe(403);
    const hijack = create(agent.AgentClientMessageSchema, { message: { case: "runRequest", value: { requestedModel: { modelId: BYOK_MODEL }, conversationId: "conv-alice", conversationState: {} } } });
    const taken = await request(asBob, `${CURSOR}/aiserver.v1.BidiService/BidiAppend`, { headers: PROTO, body: append("req-bob", 0n, hijack) });
    expect(taken.status).toBe(403);
  });
});
