import { describe, expect, it } from "vitest";
import { ConfigError } from "@byok/platform";
import { loadConfig } from "./config.ts";

describe("loadConfig", () => {
  it("has the documented defaults", () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      natsUrl: "nats://127.0.0.1:4222",
      busPrefix: "byok",
      logLevel: "info",
      logDebugContent: false,
      maxConcurrentRuns: 512,
      stateAckTimeoutMs: 30_000,
      modelIdleTimeoutMs: 15_000,
      clientDeltaCoalesceMs: 4,
      storeTimeoutMs: 10_000,
      runAckWaitMs: 30_000,
      runWorkingIntervalMs: 10_000,
      runMaxDeliver: 5,
      probeIntervalMs: 10_000,
      runFinishRetryMs: 15_000,
      workerId: undefined,
    });
  });

  it("reads numbers from the environment", () => {
    const config = loadConfig({ MAX_CONCURRENT_RUNS: "4", STATE_ACK_TIMEOUT_MS: "500", WORKER_ID: "w-1" });
    expect(config.maxConcurrentRuns).toBe(4);
    expect(config.stateAckTimeoutMs).toBe(500);
    expect(config.workerId).toBe("w-1");
  });

  it("rejects invalid values with a readable error", () => {
    expect(() => loadConfig({ MAX_CONCURRENT_RUNS: "0" })).toThrow(ConfigError);
    expect(() => loadConfig({ MAX_CONCURRENT_RUNS: "lots" })).toThrow(/MAX_CONCURRENT_RUNS/);
    expect(() => loadConfig({ RUN_MAX_DELIVER: "0" })).toThrow(/RUN_MAX_DELIVER/);
    expect(() => loadConfig({ STORE_TIMEOUT_MS: "1.5" })).toThrow(/STORE_TIMEOUT_MS/);
    expect(() => loadConfig({ RUN_WORKING_INTERVAL_MS: "30000", RUN_ACK_WAIT_MS: "30000" })).toThrow(/shorter than RUN_ACK_WAIT_MS/);
  });
});
