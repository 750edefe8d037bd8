import { describe, expect, it } from "vitest";
import { ConfigError } from "@byok/platform";
import { loadConfig } from "./config.ts";

describe("loadConfig", () => {
  it("has working defaults for a local run", () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      host: "127.0.0.1",
      port: 8787,
      gatewayConfigPath: "config/gateway.json",
      natsUrl: "nats://127.0.0.1:4222",
      busPrefix: "byok",
      heartbeatMs: 5_000,
      runWaitMs: 60_000,
    });
    expect(config.promptDir).toMatch(/\/prompt$/);
  });

  it("reads the environment", () => {
    const config = loadConfig({ PORT: "0", HOST: "0.0.0.0", GATEWAY_CONFIG: "/etc/byok/gateway.json", HEARTBEAT_MS: "250", RUN_WAIT_MS: "1000", BUS_PREFIX: "team-a" });
    expect(config).toMatchObject({ port: 0, host: "0.0.0.0", gatewayConfigPath: "/etc/byok/gateway.json", heartbeatMs: 250, runWaitMs: 1000, busPrefix: "team-a" });
  });

  it("rejects values that are not whole numbers in range, naming the variable", () => {
    expect(() => loadConfig({ PORT: "70000" })).toThrow(ConfigError);
    expect(() => loadConfig({ HEARTBEAT_MS: "" })).toThrow(/HEARTBEAT_MS/);
    expect(() => loadConfig({ RUN_WAIT_MS: "5s" })).toThrow(/RUN_WAIT_MS/);
    expect(() => loadConfig({ HEARTBEAT_MS: "0" })).toThrow(/HEARTBEAT_MS/);
  });
});
