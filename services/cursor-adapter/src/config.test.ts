import { describe, expect, it } from "vitest";
import { ConfigError } from "@byok/platform";
import { fakeFiles } from "@byok/test-support/fake-files";
import { loadConfig } from "./config.ts";

const GATEWAY_FILE = JSON.stringify({
  providers: { main: { kind: "openai-chat", baseUrl: "http://127.0.0.1:9/v1", apiKeyEnv: "TEST_KEY" } },
  models: [{ id: "file-model", displayName: "File Model", provider: "main", upstreamModel: "m" }],
});

/** A file reader that knows one file. */
const files = (path: string, content: unknown = GATEWAY_FILE) => fakeFiles({ [path]: content });

describe("loadConfig", () => {
  it("has working defaults for a local run", () => {
    const config = loadConfig({}, files("config/gateway.json"));
    expect(config).toMatchObject({
      host: "127.0.0.1",
      port: 8787,
      natsUrl: "nats://127.0.0.1:4222",
      busPrefix: "byok",
      logLevel: "info",
      logDebugContent: false,
      heartbeatMs: 5_000,
      runWaitMs: 60_000,
      endGraceMs: 60_000,
      timeouts: { storeMs: 10_000, publishDeadlineMs: 10_000, blobAckMs: 30_000, kvGetMs: 30_000, runStatusCheckMs: 30_000 },
    });
    expect(config.models.map((m) => m.id)).toEqual(["file-model"]);
    expect(config.promptDir).toMatch(/\/prompt$/);
  });

  it("reads the environment", () => {
    const config = loadConfig(
      { PORT: "0", HOST: "0.0.0.0", GATEWAY_CONFIG: "/etc/byok/gateway.json", HEARTBEAT_MS: "250", RUN_WAIT_MS: "1000", BUS_PREFIX: "team-a", LOG_DEBUG_CONTENT: "1" },
      files("/etc/byok/gateway.json"),
    );
    expect(config).toMatchObject({ port: 0, host: "0.0.0.0", heartbeatMs: 250, runWaitMs: 1000, busPrefix: "team-a", logDebugContent: true });
  });

  it("keeps the store timeout and the JetStream publish deadline apart", () => {
    const read = files("config/gateway.json");
    expect(loadConfig({ STORE_TIMEOUT_MS: "3000" }, read).timeouts).toMatchObject({ storeMs: 3000, publishDeadlineMs: 10_000 });
    expect(loadConfig({ RUN_PUBLISH_DEADLINE_MS: "2500" }, read).timeouts).toMatchObject({ storeMs: 10_000, publishDeadlineMs: 2500 });
  });

  it("rejects values that are not whole numbers in range, naming the variable", () => {
    const read = files("config/gateway.json");
    expect(() => loadConfig({ PORT: "70000" }, read)).toThrow(ConfigError);
    expect(() => loadConfig({ HEARTBEAT_MS: "" }, read)).toThrow(/HEARTBEAT_MS/);
    expect(() => loadConfig({ RUN_WAIT_MS: "5s" }, read)).toThrow(/RUN_WAIT_MS/);
    expect(() => loadConfig({ HEARTBEAT_MS: "0" }, read)).toThrow(/HEARTBEAT_MS/);
    expect(() => loadConfig({ RUN_PUBLISH_DEADLINE_MS: "-1" }, read)).toThrow(/RUN_PUBLISH_DEADLINE_MS/);
  });

  it("fails with a clear error when the gateway configuration is missing or invalid", () => {
    expect(() => loadConfig({ GATEWAY_CONFIG: "/nonexistent/gateway.json" }, files("config/gateway.json"))).toThrow(
      /cursor-adapter: cannot read gateway configuration \/nonexistent\/gateway.json/,
    );
    expect(() => loadConfig({}, files("config/gateway.json", '{"providers":{},"models":[]}'))).toThrow(ConfigError);
  });
});
