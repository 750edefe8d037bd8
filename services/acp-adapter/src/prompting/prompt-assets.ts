/**
 * The ACP prompt assets (prompt/acp in the repository, our own text):
 * `<mode>/system.md` with `{{MODEL_NAME}}` replaced by the model's display
 * name, and the tool catalog (`tools.json`, `modes/<mode>.json`). Each file is
 * read once per process, so every run of a mode gets byte-identical text and
 * tools (prefix stability across runs). A missing or broken file is a
 * PromptAssetError (the gateway's configuration, not the member's request).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { create } from "@bufbuild/protobuf";
import { ToolDefinitionSchema, type ToolDefinition } from "@byok/contracts";
import { ACP_MODES, type AcpMode } from "../sessions/session-modes.ts";
import { isAcpToolName, type AcpToolName } from "../tools/tool-names.ts";

export const MODEL_NAME_PLACEHOLDER = "{{MODEL_NAME}}";

export class PromptAssetError extends Error {
  override readonly name = "PromptAssetError";
}

export interface ToolCatalog {
  readonly definitions: ReadonlyMap<AcpToolName, ToolDefinition>;
  /** Ordered tool names per mode. */
  readonly modes: ReadonlyMap<AcpMode, readonly AcpToolName[]>;
}

export class PromptAssets {
  readonly #dir: string;
  readonly #templates = new Map<AcpMode, string>();
  #catalog: ToolCatalog | undefined;

  constructor(dir: string) {
    this.#dir = dir;
  }

  systemText(mode: AcpMode, modelDisplayName: string): string {
    let template = this.#templates.get(mode);
    if (template === undefined) {
      template = this.#read(join(mode, "system.md")).trimEnd();
      this.#templates.set(mode, template);
    }
    return template.replaceAll(MODEL_NAME_PLACEHOLDER, modelDisplayName);
  }

  toolCatalog(): ToolCatalog {
    this.#catalog ??= this.#readCatalog();
    return this.#catalog;
  }

  #readCatalog(): ToolCatalog {
    const file = this.#json("tools.json") as { tools?: unknown };
    if (!Array.isArray(file.tools)) throw new PromptAssetError(`${this.#dir}/tools.json: no "tools" list`);
    const definitions = new Map<AcpToolName, ToolDefinition>();
    for (const entry of file.tools as Array<{ name?: unknown; description?: unknown; parameters?: unknown }>) {
      if (typeof entry.name !== "string" || !isAcpToolName(entry.name)) throw new PromptAssetError(`${this.#dir}/tools.json: unknown tool ${JSON.stringify(entry.name)}`);
      if (typeof entry.description !== "string" || typeof entry.parameters !== "object" || entry.parameters === null) {
        throw new PromptAssetError(`${this.#dir}/tools.json: tool ${entry.name} needs a description and parameters`);
      }
      definitions.set(entry.name, create(ToolDefinitionSchema, { name: entry.name, description: entry.description, parametersJson: JSON.stringify(entry.parameters) }));
    }
    const modes = new Map<AcpMode, AcpToolName[]>();
    for (const mode of ACP_MODES) {
      const manifest = this.#json(join("modes", `${mode}.json`)) as { tools?: unknown };
      if (!Array.isArray(manifest.tools)) throw new PromptAssetError(`${this.#dir}/modes/${mode}.json: no "tools" list`);
      const names = manifest.tools.map((name: unknown) => {
        if (typeof name !== "string" || !isAcpToolName(name) || !definitions.has(name)) {
          throw new PromptAssetError(`${this.#dir}/modes/${mode}.json: ${JSON.stringify(name)} is not a tool of tools.json`);
        }
        return name;
      });
      modes.set(mode, names);
    }
    return { definitions, modes };
  }

  #json(file: string): unknown {
    const text = this.#read(file);
    try {
      return JSON.parse(text);
    } catch (cause) {
      throw new PromptAssetError(`${this.#dir}/${file}: not JSON: ${(cause as Error).message}`, { cause });
    }
  }

  #read(file: string): string {
    const path = join(this.#dir, file);
    try {
      return readFileSync(path, "utf8");
    } catch (cause) {
      throw new PromptAssetError(`cannot read prompt asset ${path}: ${(cause as Error).message}`, { cause });
    }
  }
}
