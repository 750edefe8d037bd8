import { describe, expect, it } from "vitest";
import { ConfigError } from "@byok/platform";
import { fakeFiles } from "@byok/test-support/fake-files";
import { loadConfig } from "./config.ts";

const GATEWAY = JSON.stringify({
  providers: { p: { kind: "openai-chat", baseUrl: "https://llm.invalid/v1", apiKeyEnv: "K" } },
  models: [
    { id: "m1", displayName: "M1", provider: "p", upstreamModel: "u1", contextWindow: 1000 },
    { id: "m2", displayName: "M2", provider: "p", upstreamModel: "u2", contextWindow: 1000 },
  ],
});
const read = fakeFiles({ "gw.json": GATEWAY, "c.pem": "CERT", "k.pem": "KEY" });

describe("acp-adapter config", () => {
  it("speaks plain ws on loopback by default and starts sessions on the first model", () => {
    const config = loadConfig({ GATEWAY_CONFIG: "gw.json" }, read);
    expect(config).toMatchObject({ host: "127.0.0.1", port: 8790, tls: undefined, defaultModelId: "m1" });
    expect(config.promptDir.endsWith("/acp")).toBe(true);
  });

  it("needs TLS (or a TLS proxy in front) on any other address", () => {
    expect(() => loadConfig({ GATEWAY_CONFIG: "gw.json", ACP_HOST: "0.0.0.0" }, read)).toThrow(ConfigError);
    expect(loadConfig({ GATEWAY_CONFIG: "gw.json", ACP_HOST: "0.0.0.0", ACP_TLS_CERT_FILE: "c.pem", ACP_TLS_KEY_FILE: "k.pem" }, read).tls).toEqual({ certPem: "CERT", keyPem: "KEY" });
    expect(loadConfig({ GATEWAY_CONFIG: "gw.json", ACP_HOST: "0.0.0.0", ACP_TLS_OFFLOADED: "1" }, read).tls).toBeUndefined();
    expect(() => loadConfig({ GATEWAY_CONFIG: "gw.json", ACP_TLS_CERT_FILE: "c.pem" }, read)).toThrow(/both/);
  });

  it("takes a default model only from the gateway file", () => {
    expect(loadConfig({ GATEWAY_CONFIG: "gw.json", ACP_DEFAULT_MODEL: "m2" }, read).defaultModelId).toBe("m2");
    expect(() => loadConfig({ GATEWAY_CONFIG: "gw.json", ACP_DEFAULT_MODEL: "gpt-x" }, read)).toThrow(ConfigError);
  });
});
