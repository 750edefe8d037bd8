/**
 * The frozen PromptSpec of an ACP run: the mode's system text and its tools in
 * manifest order, less the tools the editor cannot serve. The result depends
 * only on (mode, model display name, editor capabilities), so every run of a
 * session with the same choices sends the model the same prefix.
 */
import { create } from "@bufbuild/protobuf";
import { PromptSpecSchema, type PromptSpec } from "@byok/contracts";
import type { ClientCapabilities } from "../acp/acp-types.ts";
import type { AcpMode } from "../sessions/session-modes.ts";
import { editorServes, type AcpToolName } from "../tools/tool-names.ts";
import type { PromptAssets } from "./prompt-assets.ts";

export interface BuiltPrompt {
  readonly spec: PromptSpec;
  /** The tools offered, in order (what a tool call may name). */
  readonly toolNames: readonly AcpToolName[];
}

export function buildPromptSpec(assets: PromptAssets, mode: AcpMode, modelDisplayName: string, capabilities: ClientCapabilities): BuiltPrompt {
  const catalog = assets.toolCatalog();
  const toolNames = (catalog.modes.get(mode) ?? []).filter((name) => editorServes(name, capabilities));
  const tools = toolNames.flatMap((name) => {
    const definition = catalog.definitions.get(name);
    return definition === undefined ? [] : [definition];
  });
  return { spec: create(PromptSpecSchema, { mode, systemText: assets.systemText(mode, modelDisplayName), tools }), toolNames };
}
