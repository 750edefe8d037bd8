import { describe, expect, it } from "vitest";
import { create } from "@bufbuild/protobuf";
import { agent } from "@byok/cursor-protocol";
import { parseGatewayConfig } from "@byok/platform";
import { checkRunRequest } from "./check-run-request.ts";
import { contextTokensOf, parseModelId, selectModel } from "./model-selection.ts";

const { models } = parseGatewayConfig(
  {
    providers: { main: { kind: "anthropic", baseUrl: "https://api.example.com", apiKeyEnv: "MAIN_KEY" } },
    models: [
      { id: "sonnet", displayName: "Sonnet", provider: "main", upstreamModel: "claude-x", contextWindow: 200000, maxOutputTokens: 32000, efforts: ["low", "high"] },
      { id: "plain", displayName: "Plain", provider: "main", upstreamModel: "p" },
    ],
  },
  "test",
);

function runRequest(init: Parameters<typeof create<typeof agent.AgentRunRequestSchema>>[1]): agent.AgentRunRequest {
  return create(agent.AgentRunRequestSchema, init);
}

describe("model selection", () => {
  it("takes requested_model first, model_details as the fallback", () => {
    const both = selectModel(runRequest({ requestedModel: { modelId: "sonnet" }, modelDetails: { modelId: "plain" } }), models);
    expect(both).toMatchObject({ kind: "ok", model: { id: "sonnet" } });
    const legacy = selectModel(runRequest({ modelDetails: { modelId: "plain" } }), models);
    expect(legacy).toMatchObject({ kind: "ok", spec: { modelId: "plain", contextWindow: 128000 } });
    expect(legacy.kind === "ok" && legacy.spec.maxOutputTokens).toBeUndefined();
  });

  it("reports an unknown model", () => {
    expect(selectModel(runRequest({ requestedModel: { modelId: "gpt-9" } }), models)).toEqual({ kind: "unknown_model", modelId: "gpt-9" });
  });

  it("uses an offered effort and ignores one the model does not offer", () => {
    const high = selectModel(runRequest({ requestedModel: { modelId: "sonnet", parameters: [{ id: "reasoning", value: "high" }, { id: "fast", value: "true" }] } }), models);
    expect(high).toMatchObject({ kind: "ok", spec: { modelId: "sonnet", effort: "high", fast: true, contextWindow: 200000, maxOutputTokens: 32000 }, ignoredParameters: [] });

    const unsupported = selectModel(runRequest({ requestedModel: { modelId: "sonnet", parameters: [{ id: "effort", value: "max" }] } }), models);
    expect(unsupported.kind === "ok" && unsupported.spec.effort).toBeUndefined();
    expect(unsupported).toMatchObject({ ignoredParameters: ["effort=max"] });

    const noEfforts = selectModel(runRequest({ requestedModel: { modelId: "plain", parameters: [{ id: "reasoning", value: "low" }] } }), models);
    expect(noEfforts.kind === "ok" && noEfforts.spec.effort).toBeUndefined();
  });

  it("takes the context picker's window within the configured one, and the tokenizer of the model family", () => {
    const small = selectModel(runRequest({ requestedModel: { modelId: "sonnet", parameters: [{ id: "context", value: "8k" }] } }), models);
    expect(small).toMatchObject({ kind: "ok", spec: { contextWindow: 8000, tokenizer: "bytes" }, ignoredParameters: [] });
    const larger = selectModel(runRequest({ requestedModel: { modelId: "sonnet[context=1m]", isVariantStringRepresentation: true } }), models);
    expect(larger).toMatchObject({ kind: "ok", spec: { contextWindow: 200000 }, ignoredParameters: ["context=1m"] });
    expect([contextTokensOf("200k"), contextTokensOf("1m"), contextTokensOf("128000"), contextTokensOf("356K (Custom)"), contextTokensOf("big")]).toEqual([
      200000, 1000000, 128000, 356000, undefined,
    ]);
  });

  it("understands variant strings", () => {
    expect(parseModelId("sonnet[reasoning=low, fast=false]")).toEqual({ baseId: "sonnet", parameters: new Map([["reasoning", "low"], ["fast", "false"]]) });
    expect(parseModelId("sonnet")).toEqual({ baseId: "sonnet", parameters: new Map() });
    const variant = selectModel(runRequest({ requestedModel: { modelId: "sonnet[reasoning=low]", isVariantStringRepresentation: true } }), models);
    expect(variant).toMatchObject({ kind: "ok", spec: { modelId: "sonnet", effort: "low" } });
  });
});

describe("run request check", () => {
  const valid = {
    conversationState: {},
    conversationId: "c1",
    requestedModel: { modelId: "sonnet" },
    action: { action: { case: "userMessageAction" as const, value: { userMessage: { text: "hi" } } } },
  };

  it("accepts a complete run request", () => {
    expect(checkRunRequest(runRequest(valid))).toEqual({ kind: "ok" });
  });

  it.each([
    ["no model id", { ...valid, requestedModel: undefined }],
    ["no conversation state", { ...valid, conversationState: undefined }],
    ["no conversation id", { ...valid, conversationId: undefined }],
    ["no action", { ...valid, action: undefined }],
    ["an empty action", { ...valid, action: {} }],
  ])("rejects a run request with %s", (_what, init) => {
    expect(checkRunRequest(runRequest(init)).kind).toBe("invalid");
  });
});
