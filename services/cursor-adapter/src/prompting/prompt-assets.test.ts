import { describe, expect, it } from "vitest";
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { agent } from "@byok/cursor-protocol";
import { fileURLToPath } from "node:url";
import { promptModeOf, PROMPT_MODES } from "./modes.ts";
import { PromptAssetError, PromptAssets } from "./prompt-assets.ts";
import { buildPromptSpec } from "./prompt-spec.ts";

const PROMPT_DIR = fileURLToPath(new URL("../../../../prompt/cursor", import.meta.url));

describe("prompt assets", () => {
  it.each(PROMPT_MODES)("ships a system prompt for %s mode that names the model", (mode) => {
    const text = new PromptAssets(PROMPT_DIR).systemText(mode, "Team Model");
    expect(text).toContain("Team Model");
    expect(text).not.toMatch(/\{\{|\}\}/);
    expect(text).toContain("<user_query>");
  });

  it("gives every run of a mode byte-identical text", () => {
    const dir = mkdtempSync(join(tmpdir(), "prompts-"));
    try {
      mkdirSync(join(dir, "agent"));
      writeFileSync(join(dir, "agent", "system.md"), "You are {{MODEL_NAME}}. {{MODEL_NAME}} helps.\n\n");
      const assets = new PromptAssets(dir);
      const first = assets.systemText("agent", "M1");
      expect(first).toBe("You are M1. M1 helps.");
      // Edits on disk do not change the text of a running gateway.
      writeFileSync(join(dir, "agent", "system.md"), "changed");
      expect(assets.systemText("agent", "M1")).toBe(first);
      expect(() => assets.systemText("plan", "M1")).toThrow(PromptAssetError);
      // No tool catalog in this directory: a gateway configuration error, not a crash.
      expect(() => buildPromptSpec(assets, "agent", "M1", [])).toThrow(PromptAssetError);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("freezes the mode's tools in manifest order, then the client's MCP tools sorted by name", () => {
    const assets = new PromptAssets(PROMPT_DIR);
    const mcp = (name: string) => ({ name, description: `${name} tool`, providerIdentifier: "srv", toolName: name, inputSchemaJson: '{"type":"object"}' });
    const built = buildPromptSpec(assets, "agent", "M1", [mcp("zeta"), mcp("alpha")]);
    if (built.kind !== "ok") throw new Error(built.message);
    const names = built.spec.tools.map((t) => t.name);
    const manifest = assets.toolCatalog().modes.get("agent") ?? [];
    expect(manifest.length).toBeGreaterThan(0);
    expect(names).toEqual([...manifest, "alpha", "zeta"]);
    expect([...built.dynamicToolNames].sort()).toEqual(["alpha", "zeta"]);
    expect(built.spec.tools.every((t) => t.description !== "" && JSON.parse(t.parametersJson).type === "object")).toBe(true);
    // Same inputs, same bytes.
    const again = buildPromptSpec(assets, "agent", "M1", [mcp("alpha"), mcp("zeta")]);
    expect(again.kind === "ok" && again.spec.tools).toEqual(built.spec.tools);
  });

  it("reports a client MCP tool named like a mode tool as a protocol error", () => {
    const assets = new PromptAssets(PROMPT_DIR);
    const clash = buildPromptSpec(assets, "agent", "M1", [{ name: "Read", description: "", providerIdentifier: "srv", toolName: "read" }]);
    expect(clash.kind).toBe("protocol_error");
  });

  it("maps Cursor modes to prompt modes", () => {
    expect(promptModeOf(agent.AgentMode.ASK, false)).toBe("ask");
    expect(promptModeOf(agent.AgentMode.PLAN, false)).toBe("plan");
    expect(promptModeOf(agent.AgentMode.DEBUG, false)).toBe("debug");
    expect(promptModeOf(agent.AgentMode.AGENT, false)).toBe("agent");
    expect(promptModeOf(agent.AgentMode.MULTITASK, false)).toBe("agent");
    expect(promptModeOf(undefined, false)).toBe("agent");
    expect(promptModeOf(agent.AgentMode.ASK, true)).toBe("subagent");
  });
});
