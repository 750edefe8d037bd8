import { inspect } from "node:util";
import { describe, expect, it } from "vitest";
import { ConfigError } from "@byok/platform";
import { fakeFiles } from "@byok/test-support/fake-files";
import { loadConfig } from "./config.ts";

const KEY = "sk-test-1a2b3c4d5e6f-not-a-real-key";

const GATEWAY_FILE = {
  providers: { openai: { kind: "openai-chat", baseUrl: "https://api.openai.com/v1", apiKeyEnv: "TEAM_OPENAI_KEY", maxAttempts: 2, headersTimeoutMs: 1000 } },
  models: [{ id: "m", displayName: "M", provider: "openai", upstreamModel: "gpt-4o", contextWindow: 1000 }],
};

/** A file reader that knows one file. */
const files = (path: string, content: unknown) => fakeFiles({ [path]: content });

describe("loadConfig", () => {
  it("has the documented defaults and reads config/gateway.json", () => {
    const config = loadConfig({ TEAM_OPENAI_KEY: KEY }, files("config/gateway.json", GATEWAY_FILE));
    expect(config).toMatchObject({
      natsUrl: "nats://127.0.0.1:4222",
      busPrefix: "byok",
      logLevel: "info",
      logDebugContent: false,
      keepaliveMs: 5_000,
      callerProbeMs: 5_000,
      maxRetryAfterMs: 60_000,
    });
    expect(config.routes.get("m")).toMatchObject({ kind: "openai-chat", upstreamModel: "gpt-4o", maxAttempts: 2, headersTimeoutMs: 1000 });
    expect(config.accounting).toMatchObject({ ledgerLingerMs: 200 });
  });

  it("reads the ledger linger, 0 included (an idle writer writes at once)", () => {
    const read = files("config/gateway.json", GATEWAY_FILE);
    expect(loadConfig({ TEAM_OPENAI_KEY: KEY, ACCOUNTING_LEDGER_LINGER_MS: "0" }, read).accounting).toMatchObject({ ledgerLingerMs: 0 });
    expect(loadConfig({ TEAM_OPENAI_KEY: KEY, ACCOUNTING_LEDGER_LINGER_MS: "50" }, read).accounting).toMatchObject({ ledgerLingerMs: 50 });
    expect(() => loadConfig({ TEAM_OPENAI_KEY: KEY, ACCOUNTING_LEDGER_LINGER_MS: "-1" }, read)).toThrow(/ACCOUNTING_LEDGER_LINGER_MS/);
  });

  it("reads the environment, the file GATEWAY_CONFIG names included", () => {
    const config = loadConfig(
      { GATEWAY_CONFIG: "/etc/byok/gateway.json", TEAM_OPENAI_KEY: KEY, PROVIDER_KEEPALIVE_MS: "250", PROVIDER_MAX_RETRY_AFTER_MS: "1000", LOG_DEBUG_CONTENT: "true" },
      files("/etc/byok/gateway.json", GATEWAY_FILE),
    );
    expect(config).toMatchObject({ keepaliveMs: 250, maxRetryAfterMs: 1000, logDebugContent: true });
  });

  it("refuses durations that are not whole positive numbers, naming the variable", () => {
    const read = files("config/gateway.json", GATEWAY_FILE);
    expect(() => loadConfig({ TEAM_OPENAI_KEY: KEY, PROVIDER_KEEPALIVE_MS: "0" }, read)).toThrow(/PROVIDER_KEEPALIVE_MS/);
    expect(() => loadConfig({ TEAM_OPENAI_KEY: KEY, PROVIDER_CALLER_PROBE_MS: "5s" }, read)).toThrow(/PROVIDER_CALLER_PROBE_MS/);
    expect(() => loadConfig({ TEAM_OPENAI_KEY: KEY, PROVIDER_MAX_RETRY_AFTER_MS: "1e3" }, read)).toThrow(ConfigError);
  });

  it("names the gateway file when it is missing, not JSON or invalid", () => {
    expect(() => loadConfig({ GATEWAY_CONFIG: "/nonexistent/gateway.json", TEAM_OPENAI_KEY: KEY }, files("config/gateway.json", GATEWAY_FILE))).toThrow(
      /provider-gateway: cannot read gateway configuration \/nonexistent\/gateway.json/,
    );
    expect(() => loadConfig({ TEAM_OPENAI_KEY: KEY }, files("config/gateway.json", "{ not json"))).toThrow(/config\/gateway.json: not valid JSON/);
    expect(() => loadConfig({ TEAM_OPENAI_KEY: KEY }, files("config/gateway.json", { providers: {}, models: [] }))).toThrow(ConfigError);
  });

  it("refuses to start without the key, naming the variable", () => {
    expect(() => loadConfig({ BUS_PREFIX: "x" }, files("config/gateway.json", GATEWAY_FILE))).toThrow(/TEAM_OPENAI_KEY/);
  });

  it("never prints the key when the configuration is serialized or inspected", () => {
    const config = loadConfig({ TEAM_OPENAI_KEY: KEY }, files("config/gateway.json", GATEWAY_FILE));
    const route = config.routes.get("m");
    expect(route?.apiKey.reveal()).toBe(KEY);
    expect(JSON.stringify([...config.routes.values()])).not.toContain(KEY);
    expect(inspect(config, { depth: 10 })).not.toContain(KEY);
    expect(`${String(route?.apiKey)}`).not.toContain(KEY);
  });
});
