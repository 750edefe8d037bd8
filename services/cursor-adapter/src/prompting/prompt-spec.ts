/** The frozen PromptSpec of a run: mode, system text, tool definitions (none yet). */
import { create } from "@bufbuild/protobuf";
import { PromptSpecSchema, type PromptSpec } from "@byok/contracts";
import type { PromptAssets } from "./prompt-assets.ts";
import type { PromptMode } from "./modes.ts";

export function buildPromptSpec(assets: PromptAssets, mode: PromptMode, modelDisplayName: string): PromptSpec {
  return create(PromptSpecSchema, { mode, systemText: assets.systemText(mode, modelDisplayName), tools: [] });
}
