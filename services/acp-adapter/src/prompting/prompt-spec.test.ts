import { describe, expect, it } from "vitest";
import { fileURLToPath } from "node:url";
import { ACP_MODES } from "../sessions/session-modes.ts";
import { PromptAssets } from "./prompt-assets.ts";
import { buildPromptSpec } from "./prompt-spec.ts";

const PROMPT_DIR = fileURLToPath(new URL("../../../../prompt/acp", import.meta.url));
const FULL = { fs: { readTextFile: true, writeTextFile: true }, terminal: true };

describe("ACP prompt assets", () => {
  it.each(ACP_MODES)("ship a %s prompt naming the model", (mode) => {
    const text = new PromptAssets(PROMPT_DIR).systemText(mode, "Team Model");
    expect(text).toContain("Team Model");
    expect(text).not.toMatch(/\{\{|\}\}/);
  });

  it("offer each mode's tools in manifest order, less what the editor cannot serve", () => {
    const assets = new PromptAssets(PROMPT_DIR);
    const names = (mode: (typeof ACP_MODES)[number], caps: object) => buildPromptSpec(assets, mode, "M", caps).spec.tools.map((t) => t.name);
    expect(names("agent", FULL)).toEqual(["read_file", "write_file", "edit_file", "run_command", "todo_write"]);
    expect(names("agent", { fs: { readTextFile: true } })).toEqual(["read_file", "todo_write"]);
    expect(names("agent", {})).toEqual(["todo_write"]);
    expect(names("ask", FULL)).toEqual(["read_file"]);
    expect(names("plan", FULL)).toEqual(["read_file", "todo_write"]);
    // Same inputs, same bytes (prefix stability).
    expect(buildPromptSpec(assets, "agent", "M", FULL).spec).toEqual(buildPromptSpec(assets, "agent", "M", FULL).spec);
  });
});
