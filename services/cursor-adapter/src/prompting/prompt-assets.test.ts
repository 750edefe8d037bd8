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
      const first = buildPromptSpec(assets, "agent", "M1");
      expect(first).toMatchObject({ mode: "agent", systemText: "You are M1. M1 helps.", tools: [] });
      // Edits on disk do not change the text of a running gateway.
      writeFileSync(join(dir, "agent", "system.md"), "changed");
      expect(buildPromptSpec(assets, "agent", "M1").systemText).toBe(first.systemText);
      expect(() => assets.systemText("plan", "M1")).toThrow(PromptAssetError);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
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
