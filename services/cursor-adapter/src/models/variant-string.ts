/**
 * Variant strings: the picker may send a chosen variant as one model id such as
 * `my-model[reasoning=high]` (RequestedModel.is_variant_string_representation).
 * We advertise them in AvailableModels (variant_string_representation);
 * request/model-selection.ts parses them back.
 */

export interface ModelParameterValue {
  id: string;
  value: string;
}

export function formatVariantString(modelId: string, parameters: readonly ModelParameterValue[]): string {
  if (parameters.length === 0) return modelId;
  return `${modelId}[${parameters.map((p) => `${p.id}=${p.value}`).join(",")}]`;
}
