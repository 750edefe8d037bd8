/**
 * The model list answers: the team's BYOK models (gateway configuration) as
 * Cursor's picker (AvailableModels), the agent/CLI list (GetUsableModels) and
 * the default-model calls expect them. Only ids, names, capabilities and limits
 * leave the gateway; the credential in ModelDetails is a fixed placeholder that
 * tells Cursor the model is served elsewhere, never a provider key.
 */
import { create } from "@bufbuild/protobuf";
import { agent, aiserver } from "@byok/cursor-protocol";
import type { ModelConfig } from "@byok/platform";
import { defaultEffort, EFFORT_PARAMETER_ID, effortLabel } from "./effort-parameter.ts";
import { formatVariantString } from "./variant-string.ts";

/** Stands where Cursor expects an API key; it authenticates nothing. */
export const PLACEHOLDER_API_KEY = "byok-gateway";

const PICKER_SECTION_NAMED_MODELS = 1;
const BADGE_VARIANT_ACCENT = 1;

export function availableModelsResponse(
  models: readonly ModelConfig[],
  request: aiserver.AvailableModelsRequest,
): aiserver.AvailableModelsResponse {
  return create(aiserver.AvailableModelsResponseSchema, {
    modelNames: models.map((m) => m.id),
    models: models.map(availableModel),
    useModelParameters: request.useModelParameters ?? false,
  });
}

function availableModel(model: ModelConfig): aiserver.AvailableModelsResponse_AvailableModel {
  const tooltip = create(aiserver.AvailableModelsResponse_TooltipDataSchema, { markdownContent: tooltipMarkdown(model) });
  return create(aiserver.AvailableModelsResponse_AvailableModelSchema, {
    name: model.id,
    defaultOn: true,
    supportsAgent: true,
    degradationStatus: 0,
    tooltipData: tooltip,
    tooltipDataForMaxMode: tooltip,
    supportsThinking: model.supportsThinking,
    supportsImages: model.supportsImages,
    supportsMaxMode: false,
    supportsNonMaxMode: true,
    contextTokenLimit: model.contextWindow,
    clientDisplayName: model.displayName,
    serverModelName: model.id,
    supportsPlanMode: true,
    inputboxShortModelName: model.displayName,
    supportsSandboxing: true,
    supportsCmdK: false,
    parameterDefinitions: effortParameterDefinitions(model),
    variants: effortVariants(model),
    legacySlugs: [],
    namedModelSectionIndex: PICKER_SECTION_NAMED_MODELS,
    vendorName: "cursor",
    vendor: { id: aiserver.AvailableModelsResponse_ModelVendorId.CURSOR, displayName: "Team gateway" },
    modelPickerBadges: [{ label: "BYOK", variant: BADGE_VARIANT_ACCENT, dismissOnSelection: false }],
  });
}

function tooltipMarkdown(model: ModelConfig): string {
  const contextK = Math.round(model.contextWindow / 1000);
  return `**${model.displayName}**\n\nServed by your team's gateway (bring your own key). Context window: ${contextK}k tokens.`;
}

function effortParameterDefinitions(model: ModelConfig): aiserver.ModelParameterDefinition[] {
  if (model.efforts.length === 0) return [];
  return [
    create(aiserver.ModelParameterDefinitionSchema, {
      id: EFFORT_PARAMETER_ID,
      name: "Effort",
      markdownTooltip: "How much the model reasons before it answers.",
      parameterType: {
        kind: {
          case: "enumParameter",
          value: { values: model.efforts.map((effort) => ({ value: effort, displayName: effortLabel(effort) })) },
        },
      },
      isCycleableByHotkey: true,
    }),
  ];
}

function effortVariants(model: ModelConfig): aiserver.AvailableModelsResponse_ModelVariantConfig[] {
  const preselected = defaultEffort(model);
  return model.efforts.map((effort) => {
    const parameterValues = [{ id: EFFORT_PARAMETER_ID, value: effort }];
    return create(aiserver.AvailableModelsResponse_ModelVariantConfigSchema, {
      parameterValues,
      displayName: `${model.displayName} ${effortLabel(effort)}`,
      isMaxMode: false,
      isDefaultNonMaxConfig: effort === preselected,
      variantStringRepresentation: formatVariantString(model.id, parameterValues),
      legacySlug: `${model.id}-${effort}`,
    });
  });
}

/** agent.v1 ModelDetails for GetUsableModels / GetDefaultModelForCli. */
export function modelDetails(model: ModelConfig): agent.ModelDetails {
  return create(agent.ModelDetailsSchema, {
    modelId: model.id,
    displayModelId: model.id,
    displayName: model.displayName,
    displayNameShort: model.displayName,
    thinkingDetails: model.supportsThinking ? {} : undefined,
    maxMode: false,
    credentials: { case: "apiKeyCredentials", value: { apiKey: PLACEHOLDER_API_KEY } },
  });
}

export function usableModelsResponse(models: readonly ModelConfig[]): agent.GetUsableModelsResponse {
  return create(agent.GetUsableModelsResponseSchema, { models: models.map(modelDetails) });
}

export function defaultModelForCliResponse(models: readonly ModelConfig[]): agent.GetDefaultModelForCliResponse {
  const first = models[0];
  return create(agent.GetDefaultModelForCliResponseSchema, { model: first ? modelDetails(first) : undefined });
}

/** The first configured model is the default; the first thinking-capable one the thinking default. */
export function defaultModelResponse(models: readonly ModelConfig[]): aiserver.GetDefaultModelResponse {
  const first = models[0];
  const thinking = models.find((m) => m.supportsThinking) ?? first;
  return create(aiserver.GetDefaultModelResponseSchema, {
    model: first?.id ?? "",
    thinkingModel: thinking?.id ?? "",
    maxMode: false,
  });
}

/** Never nudge the member away from a BYOK model. */
export function defaultModelNudgeDataResponse(models: readonly ModelConfig[]): aiserver.GetDefaultModelNudgeDataResponse {
  return create(aiserver.GetDefaultModelNudgeDataResponseSchema, {
    shouldDefaultSwitchOnNewChat: false,
    modelsWithNoDefaultSwitch: models.map((m) => m.id),
  });
}
