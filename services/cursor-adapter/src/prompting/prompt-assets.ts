/**
 * Prompt assets on disk: `<promptDir>/<mode>/system.md`, with `{{MODEL_NAME}}`
 * replaced by the model's display name, and the tool catalog (`tools.json` +
 * `modes/<mode>.json`). Files are read once per process so every run of a mode
 * gets byte-identical text and tools (prefix stability across runs).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ToolCatalogError, loadToolCatalog, type ToolCatalog } from "../tools/catalog.ts";
import type { PromptMode } from "./modes.ts";

export const MODEL_NAME_PLACEHOLDER = "{{MODEL_NAME}}";

export class PromptAssetError extends Error {
  override readonly name = "PromptAssetError";
}

export class PromptAssets {
  readonly #dir: string;
  readonly #templates = new Map<PromptMode, string>();

  constructor(dir: string) {
    this.#dir = dir;
  }

  /** tools.json + the mode manifests of this directory (read once per process). */
  toolCatalog(): ToolCatalog {
    try {
      return loadToolCatalog(this.#dir);
    } catch (cause) {
      if (cause instanceof ToolCatalogError) throw new PromptAssetError(cause.message, { cause });
      throw cause;
    }
  }

  systemText(mode: PromptMode, modelDisplayName: string): string {
    return this.#template(mode).replaceAll(MODEL_NAME_PLACEHOLDER, modelDisplayName);
  }

  #template(mode: PromptMode): string {
    const cached = this.#templates.get(mode);
    if (cached !== undefined) return cached;
    const path = join(this.#dir, mode, "system.md");
    let text: string;
    try {
      text = readFileSync(path, "utf8");
    } catch (cause) {
      throw new PromptAssetError(`cannot read prompt ${path}: ${(cause as Error).message}`, { cause });
    }
    const template = text.trimEnd();
    this.#templates.set(mode, template);
    return template;
  }
}
