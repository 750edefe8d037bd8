/**
 * Route building from a configuration object that did not pass through the
 * file loader (tests, the supervisor): model settings that do not fit the
 * provider kind stop start-up with an error naming the model.
 */
import type { GatewayConfig, ModelConfig } from "@byok/platform";
import { describe, expect, it } from "vitest";
import { buildRoutes } from "./routes.ts";

const env = { TEAM_OPENAI_KEY: "sk-test-not-a-real-key" };

function configWith(kind: GatewayConfig["providers"][string]["kind"], model: Partial<ModelConfig>): GatewayConfig {
  return {
    providers: { team: { kind, baseUrl: "https://api.openai.com/v1", apiKeyEnv: "TEAM_OPENAI_KEY", headers: {}, maxAttempts: 1, headersTimeoutMs: 1000 } },
    models: [
      { id: "team-model", displayName: "Team model", provider: "team", upstreamModel: "o3-mini", contextWindow: 1000, efforts: [], supportsThinking: true, supportsImages: false, replayReasoningContent: false, ...model },
    ],
  };
}

describe("reasoningSummary on routes", () => {
  it("is carried by an openai-responses route", () => {
    expect(buildRoutes(configWith("openai-responses", { reasoningSummary: "concise" }), env).get("team-model")?.reasoningSummary).toBe("concise");
    expect(buildRoutes(configWith("openai-responses", {}), env).get("team-model")?.reasoningSummary).toBeUndefined();
  });

  it("is refused on a route of another kind, naming the model", () => {
    expect(() => buildRoutes(configWith("openai-chat", { reasoningSummary: "auto" }), env)).toThrow(/model team-model: reasoningSummary applies to openai-responses providers only/);
  });

  it("is refused on a model without supportsThinking (its summaries would be thinking the model does not declare)", () => {
    expect(() => buildRoutes(configWith("openai-responses", { reasoningSummary: "auto", supportsThinking: false }), env)).toThrow(/model team-model: reasoningSummary needs supportsThinking/);
  });
});
