import { describe, expect, it } from "vitest";
import { ConfigError } from "@byok/platform";
import { loadConfig } from "./config.ts";

describe("loadConfig", () => {
  it("requires DATABASE_URL and applies defaults for the rest", () => {
    expect(() => loadConfig({})).toThrow(ConfigError);
    expect(() => loadConfig({})).toThrow(/DATABASE_URL/);
    const config = loadConfig({ DATABASE_URL: "postgres://postgres@127.0.0.1:5432/byok" });
    expect(config).toMatchObject({ databaseUrl: "postgres://postgres@127.0.0.1:5432/byok", busPrefix: "byok", natsUrl: "nats://127.0.0.1:4222", logLevel: "info", logDebugContent: false, databasePoolSize: 10 });
  });

  it("rejects an invalid bus prefix and pool size", () => {
    expect(() => loadConfig({ DATABASE_URL: "postgres://x", BUS_PREFIX: "a.b" })).toThrow(/BUS_PREFIX/);
    expect(() => loadConfig({ DATABASE_URL: "postgres://x", DATABASE_POOL_SIZE: "0" })).toThrow(/DATABASE_POOL_SIZE/);
    expect(() => loadConfig({ DATABASE_URL: "postgres://x", DATABASE_POOL_SIZE: "101" })).toThrow(/DATABASE_POOL_SIZE/);
  });
});
