/**
 * The model-facing tool set of a run: the static catalog (prompt/cursor/tools.json)
 * filtered and ordered by the mode manifest (prompt/cursor/modes/<mode>.json),
 * minus the tools the gateway cannot offer this run (Task with sub-agents
 * disabled, WebSearch without a backend, ...), followed by the client's
 * dynamic MCP tools sorted by name. The order never depends on anything but
 * these inputs (prefix stability).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { create } from "@bufbuild/protobuf";
import { ToolDefinitionSchema, type ToolDefinition } from "@byok/contracts";
import { isStaticToolName } from "./cards.ts";
import { inputSchemaJsonOf, type McpDefinitionLike } from "./mcp-routes.ts";

export const TOOL_MODES = ["agent", "ask", "plan", "debug", "subagent"] as const;
export type ToolMode = (typeof TOOL_MODES)[number];

/** The repository's prompt/cursor directory. */
export const DEFAULT_PROMPT_DIR = fileURLToPath(new URL("../../../../prompt/cursor", import.meta.url));

export class ToolCatalogError extends Error {
  override readonly name = "ToolCatalogError";
}

export interface ToolCatalog {
  /** Catalog entries by name (parameters already serialized). */
  readonly definitions: ReadonlyMap<string, ToolDefinition>;
  /** Ordered static tool names per mode. */
  readonly modes: ReadonlyMap<ToolMode, readonly string[]>;
}

export type ToolSetResult =
  | { kind: "ok"; tools: ToolDefinition[] }
  /** The client's MCP tools cannot be offered as sent (name clash, empty name). */
  | { kind: "protocol_error"; message: string };

const catalogs = new Map<string, ToolCatalog>();

/** Reads and checks the catalog + manifests once per directory. Throws ToolCatalogError on bad assets. */
export function loadToolCatalog(promptDir: string = DEFAULT_PROMPT_DIR): ToolCatalog {
  const cached = catalogs.get(promptDir);
  if (cached !== undefined) return cached;
  const catalog = readCatalog(promptDir);
  catalogs.set(promptDir, catalog);
  return catalog;
}

const NOTHING_LEFT_OUT: ReadonlySet<string> = new Set();

/**
 * Ordered ToolDefinitions for a run: the mode's tools in manifest order except
 * `leaveOut`, then the dynamic MCP tools sorted by name (code-point order). A
 * dynamic tool whose name equals a mode tool or another dynamic tool is a
 * protocol error.
 */
export function compileToolSet(
  mode: ToolMode,
  mcpTools: readonly McpDefinitionLike[],
  catalog: ToolCatalog = loadToolCatalog(),
  leaveOut: ReadonlySet<string> = NOTHING_LEFT_OUT,
): ToolSetResult {
  const manifest = catalog.modes.get(mode);
  if (manifest === undefined) throw new ToolCatalogError(`no tool manifest for mode ${mode}`);
  const names = manifest.filter((name) => !leaveOut.has(name));
  const staticTools = names.map((name) => {
    const definition = catalog.definitions.get(name);
    if (definition === undefined) throw new ToolCatalogError(`mode ${mode} lists unknown tool ${name}`);
    return definition;
  });
  const taken = new Set(names);
  const dynamicTools: ToolDefinition[] = [];
  for (const tool of mcpTools) {
    if (tool.name === "") return { kind: "protocol_error", message: "an MCP tool definition has an empty name" };
    if (taken.has(tool.name)) {
      return { kind: "protocol_error", message: `MCP tool name ${JSON.stringify(tool.name)} clashes with another tool of the run` };
    }
    taken.add(tool.name);
    dynamicTools.push(
      create(ToolDefinitionSchema, {
        name: tool.name,
        description: tool.description || `MCP tool ${tool.toolName} of server ${tool.providerIdentifier}.`,
        parametersJson: normalizedSchemaJson(inputSchemaJsonOf(tool)),
      }),
    );
  }
  dynamicTools.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { kind: "ok", tools: [...staticTools, ...dynamicTools] };
}

function readCatalog(dir: string): ToolCatalog {
  const raw = readJson(join(dir, "tools.json"));
  const entries = isObject(raw) && Array.isArray(raw["tools"]) ? raw["tools"] : undefined;
  if (entries === undefined) throw new ToolCatalogError(`${dir}/tools.json: expected {"tools": [...]}`);
  const definitions = new Map<string, ToolDefinition>();
  for (const entry of entries) {
    if (!isObject(entry) || typeof entry["name"] !== "string" || typeof entry["description"] !== "string" || !isObject(entry["parameters"])) {
      throw new ToolCatalogError(`${dir}/tools.json: every tool needs name, description and parameters`);
    }
    const name = entry["name"];
    if (!isStaticToolName(name)) throw new ToolCatalogError(`${dir}/tools.json: ${name} has no implementation`);
    if (definitions.has(name)) throw new ToolCatalogError(`${dir}/tools.json: ${name} is listed twice`);
    definitions.set(
      name,
      create(ToolDefinitionSchema, { name, description: entry["description"], parametersJson: JSON.stringify(entry["parameters"]) }),
    );
  }
  const modes = new Map<ToolMode, readonly string[]>();
  for (const mode of TOOL_MODES) {
    const path = join(dir, "modes", `${mode}.json`);
    const manifest = readJson(path);
    const names = isObject(manifest) ? manifest["tools"] : undefined;
    if (!Array.isArray(names) || !names.every((n): n is string => typeof n === "string")) {
      throw new ToolCatalogError(`${path}: expected {"tools": ["Name", ...]}`);
    }
    for (const name of names) {
      if (!definitions.has(name)) throw new ToolCatalogError(`${path}: unknown tool ${name}`);
    }
    if (new Set(names).size !== names.length) throw new ToolCatalogError(`${path}: a tool is listed twice`);
    modes.set(mode, Object.freeze([...names]));
  }
  return { definitions, modes };
}

/** Schema text as compact JSON; the model API needs an object schema. */
function normalizedSchemaJson(text: string): string {
  try {
    const value: unknown = JSON.parse(text);
    if (isObject(value)) return JSON.stringify(value);
  } catch {
    // fall through
  }
  return '{"type":"object","properties":{}}';
}

function readJson(path: string): unknown {
  try {
    return JSON.parse(readFileSync(path, "utf8"));
  } catch (cause) {
    throw new ToolCatalogError(`cannot read ${path}: ${(cause as Error).message}`, { cause });
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
