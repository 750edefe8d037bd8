/**
 * The frozen PromptSpec of a run: mode, system text and the ordered tool
 * definitions (the mode's catalog tools in manifest order, less those the run
 * cannot be offered, then the client's dynamic MCP tools sorted by name). A dynamic tool whose name clashes is the
 * client's protocol error, reported as a value.
 */
import { create } from "@bufbuild/protobuf";
import { PromptSpecSchema, type PromptSpec } from "@byok/contracts";
import { compileToolSet } from "../tools/catalog.ts";
import type { McpDefinitionLike } from "../tools/mcp-routes.ts";
import type { PromptAssets } from "./prompt-assets.ts";
import type { PromptMode } from "./modes.ts";

export type PromptSpecResult =
  | {
      kind: "ok";
      spec: PromptSpec;
      /** Names of the client's MCP tools offered to the model by name. */
      dynamicToolNames: ReadonlySet<string>;
    }
  | { kind: "protocol_error"; message: string };

export function buildPromptSpec(
  assets: PromptAssets,
  mode: PromptMode,
  modelDisplayName: string,
  mcpTools: readonly McpDefinitionLike[],
  leaveOut: ReadonlySet<string> = new Set(),
): PromptSpecResult {
  const toolSet = compileToolSet(mode, mcpTools, assets.toolCatalog(), leaveOut);
  if (toolSet.kind === "protocol_error") return toolSet;
  const spec = create(PromptSpecSchema, { mode, systemText: assets.systemText(mode, modelDisplayName), tools: toolSet.tools });
  return { kind: "ok", spec, dynamicToolNames: new Set(mcpTools.map((t) => t.name)) };
}
