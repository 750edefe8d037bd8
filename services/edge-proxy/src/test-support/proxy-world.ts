/**
 * For the edge proxy's end-to-end tests: one proxy over real sockets, in front
 * of an HTTPS stand-in for Cursor's upstream and an HTTP stand-in for the
 * adapter (both record what they received), with members from an in-memory
 * directory and a tunnel agent for each of two members. `useProxyWorld()`
 * starts it before the file's tests and stops it after them.
 */
import { afterAll, beforeAll } from "vitest";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { silentLogger } from "@byok/platform";
import { loadConfig } from "../config.ts";
import type { MemberDirectory, MemberLookup } from "../member-store.ts";
import { startEdgeProxy, type EdgeProxy } from "../service.ts";
import { ProxyTunnelAgent, proxyAuthorization } from "./proxy-client.ts";
import { makeOriginPki, startHttpOrigin, startHttpsOrigin, type TestOrigin, type TestPki } from "./origins.ts";

export const CURSOR = "https://api2.cursor.sh";
export const BYOK_MODEL = "team-gpt";
export const PROTO = { "content-type": "application/proto", "connect-protocol-version": "1" };

const KEYS: Record<string, string> = { "alice-key": "member-alice", "bob-key": "member-bob" };
const directory: MemberDirectory = {
  async verifyKey(key): Promise<MemberLookup> {
    const memberId = KEYS[key];
    return memberId ? { kind: "member", memberId } : { kind: "unknown" };
  },
};

export interface ProxyWorld {
  pki: TestPki;
  upstream: TestOrigin;
  adapter: TestOrigin;
  proxy: EdgeProxy;
  /** Tunnels of member-alice (key "alice-key") and member-bob (key "bob-key"). */
  alice: ProxyTunnelAgent;
  bob: ProxyTunnelAgent;
}

/** The world, filled in by the file's beforeAll. */
export function useProxyWorld(): ProxyWorld {
  const world = {} as ProxyWorld;
  let dir: string | undefined;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "edge-proxy-"));
    world.pki = await makeOriginPki();
    writeFileSync(join(dir, "upstream-ca.pem"), world.pki.caPem);
    world.upstream = await startHttpsOrigin(world.pki, (_req, res) => res.writeHead(404).end());
    world.adapter = await startHttpOrigin((_req, res) => res.writeHead(404).end());
    const config = loadConfig(
      {
        PROXY_PORT: "0",
        UPSTREAM_ORIGIN: world.upstream.url,
        UPSTREAM_CA_FILE: join(dir, "upstream-ca.pem"),
        ADAPTER_URL: world.adapter.url,
        CA_DIR: join(dir, "ca"),
        ROUTE_WAIT_MS: "1500",
      },
      () => JSON.stringify({ providers: { p: { kind: "openai-chat", baseUrl: "http://127.0.0.1:9/v1", apiKeyEnv: "KEY" } }, models: [{ id: BYOK_MODEL, displayName: "BYOK", provider: "p", upstreamModel: "m" }] }),
    );
    world.proxy = await startEdgeProxy(config, { log: silentLogger(), members: directory });
    world.alice = new ProxyTunnelAgent({ port: world.proxy.port, authorization: proxyAuthorization("alice-key", "alice") }, world.proxy.caCertPem);
    world.bob = new ProxyTunnelAgent({ port: world.proxy.port, authorization: proxyAuthorization("bob-key", "bob") }, world.proxy.caCertPem);
  });
  afterAll(async () => {
    await world.proxy?.stop();
    await world.upstream?.close();
    await world.adapter?.close();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });
  return world;
}
