import { describe, expect, it } from "vitest";
import { ConfigError } from "@byok/platform";
import { fakeFiles } from "@byok/test-support/fake-files";
import { loadConfig } from "./config.ts";

const GATEWAY_FILE = JSON.stringify({
  providers: { main: { kind: "anthropic", baseUrl: "https://api.anthropic.com", apiKeyEnv: "ANTHROPIC_API_KEY" } },
  models: [
    { id: "team-sonnet", displayName: "Sonnet", provider: "main", upstreamModel: "claude-sonnet-4-5" },
    { id: "team-opus", displayName: "Opus", provider: "main", upstreamModel: "claude-opus-4-1" },
  ],
});

/** A file reader that knows one file. */
const files = (path: string, content: unknown = GATEWAY_FILE) => fakeFiles({ [path]: content });

describe("loadConfig", () => {
  it("has the documented defaults and routes the BYOK models of config/gateway.json", () => {
    const config = loadConfig({}, files("config/gateway.json"));
    expect(config).toMatchObject({
      natsUrl: "nats://127.0.0.1:4222",
      busPrefix: "byok",
      logLevel: "info",
      logDebugContent: false,
      host: "127.0.0.1",
      port: 8080,
      upstreamOrigin: undefined,
      upstreamCaFile: undefined,
      interceptDomains: ["cursor.sh"],
      caDir: ".data/edge-proxy/ca",
      routeWaitMs: 30_000,
      routeTtlMs: 6 * 60 * 60 * 1000,
      upstreamUnaryTimeoutMs: 15_000,
      connectTimeoutMs: 15_000,
      memberCacheMs: 30_000,
      storeTimeoutMs: 10_000,
      byokModelIds: ["team-sonnet", "team-opus"],
    });
    expect(config.adapterOrigin.href).toBe("http://127.0.0.1:8787/");
  });

  it("reads the environment, the file GATEWAY_CONFIG names included", () => {
    const config = loadConfig(
      {
        GATEWAY_CONFIG: "/etc/byok/gateway.json",
        PROXY_HOST: "0.0.0.0",
        PROXY_PORT: "3128",
        ADAPTER_URL: "http://cursor-adapter:8787",
        UPSTREAM_ORIGIN: "",
        INTERCEPT_DOMAINS: " Cursor.sh , cursor.com. ",
        STORE_TIMEOUT_MS: "2500",
        MEMBER_CACHE_MS: "1000",
        LOG_DEBUG_CONTENT: "true",
      },
      files("/etc/byok/gateway.json"),
    );
    expect(config).toMatchObject({
      host: "0.0.0.0",
      port: 3128,
      upstreamOrigin: undefined,
      interceptDomains: ["cursor.sh", "cursor.com"],
      storeTimeoutMs: 2500,
      memberCacheMs: 1000,
      logDebugContent: true,
    });
    expect(config.adapterOrigin.host).toBe("cursor-adapter:8787");
  });

  it("rejects invalid values, naming the variable", () => {
    const read = files("config/gateway.json");
    expect(() => loadConfig({ PROXY_PORT: "65536" }, read)).toThrow(/PROXY_PORT/);
    expect(() => loadConfig({ ROUTE_WAIT_MS: "0" }, read)).toThrow(/ROUTE_WAIT_MS/);
    expect(() => loadConfig({ STORE_TIMEOUT_MS: "5s" }, read)).toThrow(/STORE_TIMEOUT_MS/);
    expect(() => loadConfig({ ADAPTER_URL: "http://127.0.0.1:8787/path" }, read)).toThrow(/ADAPTER_URL/);
    expect(() => loadConfig({ INTERCEPT_DOMAINS: "*.cursor.sh" }, read)).toThrow(/INTERCEPT_DOMAINS/);
    expect(() => loadConfig({ INTERCEPT_DOMAINS: " , " }, read)).toThrow(ConfigError);
  });

  it("fails with a clear error when the gateway configuration is missing", () => {
    expect(() => loadConfig({ GATEWAY_CONFIG: "/nonexistent/gateway.json" }, files("config/gateway.json"))).toThrow(
      /edge-proxy: cannot read gateway configuration \/nonexistent\/gateway.json/,
    );
  });
});
