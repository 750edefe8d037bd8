/**
 * Gateway configuration checks that need more than one field: models name a
 * known provider, and reasoningSummary is accepted only on openai-responses
 * models (anywhere else it is an error naming the model, never ignored).
 */
import { describe, expect, it } from "vitest";
import { parseGatewayConfig } from "./gateway-config.ts";
import { webConfigSchema } from "./web-config.ts";

const providers = {
  responses: { kind: "openai-responses", baseUrl: "https://api.openai.com/v1", apiKeyEnv: "TEAM_OPENAI_KEY" },
  chat: { kind: "openai-chat", baseUrl: "https://api.openai.com/v1", apiKeyEnv: "TEAM_OPENAI_KEY" },
  claude: { kind: "anthropic", baseUrl: "https://api.anthropic.com", apiKeyEnv: "TEAM_ANTHROPIC_KEY" },
};

function configWith(model: Record<string, unknown>): unknown {
  return { providers, models: [{ id: "team-model", displayName: "Team model", upstreamModel: "upstream", ...model }] };
}

describe("reasoningSummary", () => {
  it("is accepted on an openai-responses model and absent unless set", () => {
    const models = [
      { id: "o3-mini-team", displayName: "o3-mini", provider: "responses", upstreamModel: "o3-mini", supportsThinking: true, reasoningSummary: "detailed" },
      { id: "gpt-team", displayName: "GPT", provider: "responses", upstreamModel: "gpt-4o" },
    ];
    const config = parseGatewayConfig({ providers, models }, "test.json");
    expect(config.models.map((m) => m.reasoningSummary)).toEqual(["detailed", undefined]);
  });

  for (const provider of ["chat", "claude"]) {
    it(`is a configuration error on a ${providers[provider as keyof typeof providers].kind} model, naming the model`, () => {
      expect(() => parseGatewayConfig(configWith({ provider, reasoningSummary: "auto" }), "test.json")).toThrow(
        /models\.0\.reasoningSummary: model team-model: reasoningSummary applies to openai-responses providers only/,
      );
    });
  }

  it("refuses a value the Responses API does not define", () => {
    expect(() => parseGatewayConfig(configWith({ provider: "responses", reasoningSummary: "verbose" }), "test.json")).toThrow(/models\.0\.reasoningSummary/);
  });

  it("still reports an unknown provider (also for names that exist on plain objects)", () => {
    expect(() => parseGatewayConfig(configWith({ provider: "toString", reasoningSummary: "auto" }), "test.json")).toThrow(/models\.0\.provider: unknown provider toString/);
  });
});

describe("subagentModel", () => {
  const model = (id: string, extra: Record<string, unknown> = {}) => ({ id, displayName: id, provider: "chat", upstreamModel: "gpt-4o", ...extra });

  it("defaults to inherit and accepts disabled or another model of the file", () => {
    const config = parseGatewayConfig(
      { providers, models: [model("big", { subagentModel: "small" }), model("small", { subagentModel: "disabled" }), model("plain")] },
      "test.json",
    );
    expect(config.models.map((m) => m.subagentModel ?? "inherit")).toEqual(["small", "disabled", "inherit"]);
  });

  it("refuses a model id the file does not define, naming the model", () => {
    expect(() => parseGatewayConfig({ providers, models: [model("big", { subagentModel: "composer-2" })] }, "test.json")).toThrow(
      /models\.0\.subagentModel: model big: subagentModel composer-2 is not a model of this file/,
    );
  });
});

describe("web", () => {
  it("has a fetch policy that refuses special-purpose networks by default and no search backend", () => {
    expect(parseGatewayConfig(configWith({ provider: "chat" }), "test.json").web).toBeUndefined();
    const web = webConfigSchema.parse({});
    expect(web.fetch).toMatchObject({ enabled: true, allowHosts: ["*"], denyHosts: [], allowNetworks: [], maxRedirects: 5 });
    expect(web.search).toBeUndefined();
  });

  it("normalizes host patterns and checks networks and the search backend", () => {
    const config = parseGatewayConfig(
      {
        ...(configWith({ provider: "chat" }) as object),
        web: {
          fetch: { allowHosts: ["Docs.Example.com.", "*.example.org"], denyHosts: ["evil.example.org"], allowNetworks: ["127.0.0.0/8", "::1/128"] },
          search: { kind: "searxng", url: "http://127.0.0.1:8888/search" },
        },
      },
      "test.json",
    );
    expect(config.web?.fetch.allowHosts).toEqual(["docs.example.com", "*.example.org"]);
    expect(config.web?.search).toMatchObject({ kind: "searxng", maxResults: 8 });
    for (const bad of [{ fetch: { allowNetworks: ["10.0.0.0/33"] } }, { fetch: { allowHosts: ["exa mple.com"] } }, { search: { kind: "bing", url: "http://x" } }]) {
      expect(() => parseGatewayConfig({ ...(configWith({ provider: "chat" }) as object), web: bad }, "test.json")).toThrow(/web\./);
    }
  });
});
