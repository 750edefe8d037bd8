import { describe, expect, it } from "vitest";
import { z } from "zod";
import { commonConfigOf, commonEnvSchema, ConfigError, envFlag, envInt, envMs, envPort, parseEnv, readGatewayConfig, storeCallerEnvSchema } from "./config.ts";

const schema = z.object({ COUNT: envInt(3, { min: 1, max: 10 }), WAIT_MS: envMs(500), PORT: envPort(8080), ON: envFlag(false) });

describe("env value parsers", () => {
  it("apply the defaults when a variable is unset", () => {
    expect(parseEnv(schema, {}, "svc")).toEqual({ COUNT: 3, WAIT_MS: 500, PORT: 8080, ON: false });
  });

  it("read whole numbers, ignoring surrounding blanks", () => {
    expect(parseEnv(schema, { COUNT: " 7 ", WAIT_MS: "250", PORT: "0", ON: "true" }, "svc")).toEqual({ COUNT: 7, WAIT_MS: 250, PORT: 0, ON: true });
  });

  it.each([
    ["COUNT", "0"],
    ["COUNT", "11"],
    ["COUNT", "2.5"],
    ["WAIT_MS", "0"],
    ["WAIT_MS", "5s"],
    ["WAIT_MS", "1e3"],
    ["WAIT_MS", ""],
    ["PORT", "65536"],
    ["PORT", "-1"],
    ["ON", "yes"],
  ])("refuse %s=%j with a ConfigError naming the variable and the service", (name, value) => {
    expect(() => parseEnv(schema, { [name]: value }, "svc")).toThrow(ConfigError);
    expect(() => parseEnv(schema, { [name]: value }, "svc")).toThrow(new RegExp(`^svc: invalid configuration\\n  ${name}: `));
  });
});

describe("common keys", () => {
  it("give every service the same field names and defaults", () => {
    expect(commonConfigOf(parseEnv(commonEnvSchema, {}, "svc"))).toEqual({
      natsUrl: "nats://127.0.0.1:4222",
      busPrefix: "byok",
      logLevel: "info",
      logDebugContent: false,
    });
    expect(commonConfigOf(parseEnv(commonEnvSchema, { LOG_DEBUG_CONTENT: "1", LOG_LEVEL: "debug" }, "svc"))).toMatchObject({ logLevel: "debug", logDebugContent: true });
  });

  it("default the store timeout to 10 s", () => {
    expect(parseEnv(storeCallerEnvSchema, {}, "svc").STORE_TIMEOUT_MS).toBe(10_000);
  });
});

describe("readGatewayConfig", () => {
  const valid = JSON.stringify({
    providers: { p: { kind: "openai-chat", baseUrl: "https://api.openai.com/v1", apiKeyEnv: "OPENAI_API_KEY" } },
    models: [{ id: "m", displayName: "M", provider: "p", upstreamModel: "gpt-4o" }],
  });

  it("parses the file the reader returns", () => {
    expect(readGatewayConfig("gw.json", () => valid, "svc").models.map((m) => m.id)).toEqual(["m"]);
  });

  it("turns every problem into a ConfigError naming the service and the file", () => {
    const missing = () => {
      throw new Error("ENOENT: no such file");
    };
    expect(() => readGatewayConfig("gw.json", missing, "svc")).toThrow(/^svc: cannot read gateway configuration gw.json: ENOENT/);
    expect(() => readGatewayConfig("gw.json", () => "{", "svc")).toThrow(/^svc: gw.json: not valid JSON/);
    expect(() => readGatewayConfig("gw.json", () => '{"providers":{},"models":[]}', "svc")).toThrow(/^svc: gw.json: invalid gateway configuration/);
    expect(() => readGatewayConfig("gw.json", () => "{", "svc")).toThrow(ConfigError);
  });
});
