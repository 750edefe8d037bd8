import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agent, aiserver } from "@byok/cursor-protocol";
import { parseGatewayConfig, type ModelConfig } from "@byok/platform";
import type { AdapterServer } from "../connect/http-server.ts";
import { startStubAdapterServer } from "../connect/testing/stub-adapter-server.ts";
import { callUnary } from "../connect/testing/wire-client.ts";
import { EFFORT_PARAMETER_ID } from "./effort-parameter.ts";
import { PLACEHOLDER_API_KEY } from "./model-catalog.ts";

const config = parseGatewayConfig(
  {
    providers: {
      openai: { kind: "openai-responses", baseUrl: "https://api.openai.com/v1", apiKeyEnv: "OPENAI_API_KEY" },
      anthropic: { kind: "anthropic", baseUrl: "https://api.anthropic.com", apiKeyEnv: "ANTHROPIC_API_KEY" },
    },
    models: [
      { id: "team-gpt", displayName: "Team GPT", provider: "openai", upstreamModel: "gpt-5", contextWindow: 400_000, efforts: ["low", "medium", "high"], effort: "high", supportsImages: true },
      { id: "team-claude", displayName: "Team Claude", provider: "anthropic", upstreamModel: "claude-x", contextWindow: 200_000, supportsThinking: true },
    ],
  },
  "test",
);
const models: ModelConfig[] = config.models;

let server: AdapterServer;

beforeAll(async () => {
  ({ server } = await startStubAdapterServer({ models }));
});

afterAll(async () => {
  await server.stop();
});

describe("model list endpoints", () => {
  it("AvailableModels lists every BYOK model with its capabilities and limits", async () => {
    const response = await callUnary(
      server.url,
      "/aiserver.v1.AiService/AvailableModels",
      aiserver.AvailableModelsRequestSchema,
      { useModelParameters: true },
      aiserver.AvailableModelsResponseSchema,
    );
    expect(response.modelNames).toEqual(["team-gpt", "team-claude"]);
    expect(response.useModelParameters).toBe(true);
    const [gpt, claude] = response.models;
    expect(gpt).toMatchObject({
      name: "team-gpt",
      serverModelName: "team-gpt",
      clientDisplayName: "Team GPT",
      defaultOn: true,
      supportsAgent: true,
      supportsImages: true,
      supportsThinking: false,
      contextTokenLimit: 400_000,
    });
    expect(claude).toMatchObject({ name: "team-claude", clientDisplayName: "Team Claude", supportsThinking: true, supportsImages: false, contextTokenLimit: 200_000 });
  });

  it("offers the effort parameter only for models that list efforts, preselecting the configured one", async () => {
    const response = await callUnary(server.url, "/aiserver.v1.AiService/AvailableModels", aiserver.AvailableModelsRequestSchema, {}, aiserver.AvailableModelsResponseSchema);
    const [gpt, claude] = response.models;
    expect(claude?.parameterDefinitions).toEqual([]);
    expect(claude?.variants).toEqual([]);

    const definition = gpt?.parameterDefinitions[0];
    expect(definition?.id).toBe(EFFORT_PARAMETER_ID);
    const kind = definition?.parameterType?.kind;
    expect(kind?.case).toBe("enumParameter");
    expect(kind?.case === "enumParameter" ? kind.value.values.map((v) => v.value) : []).toEqual(["low", "medium", "high"]);

    expect(gpt?.variants.map((v) => v.variantStringRepresentation)).toEqual([
      "team-gpt[reasoning=low]",
      "team-gpt[reasoning=medium]",
      "team-gpt[reasoning=high]",
    ]);
    expect(gpt?.variants.filter((v) => v.isDefaultNonMaxConfig).map((v) => v.parameterValues[0]?.value)).toEqual(["high"]);
  });

  it("GetUsableModels answers on both paths with a placeholder credential, never a provider key", async () => {
    for (const path of ["/agent.v1.AgentService/GetUsableModels", "/aiserver.v1.AiService/GetUsableModels"]) {
      const response = await callUnary(server.url, path, agent.GetUsableModelsRequestSchema, {}, agent.GetUsableModelsResponseSchema);
      expect(response.models.map((m) => [m.modelId, m.displayName]), path).toEqual([
        ["team-gpt", "Team GPT"],
        ["team-claude", "Team Claude"],
      ]);
      for (const model of response.models) {
        expect(model.credentials).toEqual({ case: "apiKeyCredentials", value: expect.objectContaining({ apiKey: PLACEHOLDER_API_KEY }) });
      }
      expect(response.models[0]?.thinkingDetails).toBeUndefined();
      expect(response.models[1]?.thinkingDetails).toBeDefined();
    }
  });

  it("names the first BYOK model as default and never nudges away from BYOK models", async () => {
    const byDefault = await callUnary(server.url, "/aiserver.v1.AiService/GetDefaultModel", aiserver.GetDefaultModelRequestSchema, {}, aiserver.GetDefaultModelResponseSchema);
    expect(byDefault.model).toBe("team-gpt");
    expect(byDefault.thinkingModel).toBe("team-claude");

    for (const path of ["/agent.v1.AgentService/GetDefaultModelForCli", "/aiserver.v1.AiService/GetDefaultModelForCli"]) {
      const cli = await callUnary(server.url, path, agent.GetDefaultModelForCliRequestSchema, {}, agent.GetDefaultModelForCliResponseSchema);
      expect(cli.model?.modelId, path).toBe("team-gpt");
    }

    const nudge = await callUnary(
      server.url,
      "/aiserver.v1.AiService/GetDefaultModelNudgeData",
      aiserver.GetDefaultModelNudgeDataRequestSchema,
      {},
      aiserver.GetDefaultModelNudgeDataResponseSchema,
    );
    expect(nudge.shouldDefaultSwitchOnNewChat).toBe(false);
    expect(nudge.modelsWithNoDefaultSwitch).toEqual(["team-gpt", "team-claude"]);
  });

  it("GetServerConfig forces HTTP/2 off on both services", async () => {
    for (const path of ["/aiserver.v1.AiService/GetServerConfig", "/aiserver.v1.ServerConfigService/GetServerConfig"]) {
      const response = await callUnary(server.url, path, aiserver.GetServerConfigRequestSchema, {}, aiserver.GetServerConfigResponseSchema);
      expect(response.http2Config, path).toBe(aiserver.Http2Config.FORCE_ALL_DISABLED);
      expect(response.configVersion, path).not.toBe("");
    }
  });

  it("serves a health probe and 404 for paths it does not own", async () => {
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    expect((await fetch(`${server.url}/aiserver.v1.DashboardService/GetMe`, { method: "POST" })).status).toBe(404);
  });
});
