import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fromJson } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import { afterEach, describe, expect, it } from "vitest";
import { compileToolSet, loadToolCatalog, TOOL_MODES, ToolCatalogError, type ToolSetResult } from "./catalog.ts";
import type { McpDefinitionLike } from "./mcp-routes.ts";

const AGENT_ORDER = [
  "Shell",
  "AwaitShell",
  "Grep",
  "Delete",
  "TodoWrite",
  "StrReplace",
  "Write",
  "EditNotebook",
  "Read",
  "ReadLints",
  "Glob",
  "AskQuestion",
  "Task",
  "SwitchMode",
  "WebSearch",
  "WebFetch",
  "GetMcpTools",
  "FetchMcpResource",
  "CallMcpTool",
];

const WRITE_TOOLS = ["Write", "StrReplace", "Delete", "EditNotebook"];

function names(result: ToolSetResult): string[] {
  if (result.kind !== "ok") throw new Error(result.message);
  return result.tools.map((t) => t.name);
}

function mcpTool(name: string, extra: Partial<McpDefinitionLike> = {}): McpDefinitionLike {
  return { name, description: `${name} tool`, providerIdentifier: "srv", toolName: name.replace(/^.*-/, ""), ...extra };
}

describe("compileToolSet", () => {
  it("offers the agent tools in the reference order", () => {
    expect(names(compileToolSet("agent", []))).toEqual(AGENT_ORDER);
  });

  it("loads a manifest for every mode, each a subset of the catalog with JSON-schema parameters", () => {
    for (const mode of TOOL_MODES) {
      const result = compileToolSet(mode, []);
      if (result.kind !== "ok") throw new Error(result.message);
      expect(result.tools.length).toBeGreaterThan(5);
      for (const tool of result.tools) {
        expect(tool.description.length).toBeGreaterThan(20);
        expect(JSON.parse(tool.parametersJson)).toMatchObject({ type: "object" });
      }
    }
  });

  it("keeps the subagent set free of AskQuestion and the ask set free of AwaitShell", () => {
    expect(names(compileToolSet("subagent", []))).not.toContain("AskQuestion");
    expect(names(compileToolSet("ask", []))).not.toContain("AwaitShell");
  });

  it("gives sub-agents write tools and UpdateCurrentStep but no Task (one level of sub-agents), and nobody else UpdateCurrentStep", () => {
    const subagent = names(compileToolSet("subagent", []));
    expect(subagent).toEqual(expect.arrayContaining([...WRITE_TOOLS, "Shell", "WebFetch", "WebSearch", "UpdateCurrentStep"]));
    expect(subagent).not.toContain("Task");
    for (const mode of ["agent", "ask", "plan", "debug"] as const) expect(names(compileToolSet(mode, []))).not.toContain("UpdateCurrentStep");
  });

  it("keeps ask and plan mode read-only; plan mode presents plans and every working mode can switch modes", () => {
    for (const mode of ["ask", "plan"] as const) {
      const tools = names(compileToolSet(mode, []));
      for (const tool of WRITE_TOOLS) expect(tools).not.toContain(tool);
    }
    expect(names(compileToolSet("plan", []))).toEqual(expect.arrayContaining(["CreatePlan", "Task", "WebSearch", "WebFetch"]));
    expect(names(compileToolSet("agent", []))).not.toContain("CreatePlan");
    for (const mode of ["agent", "ask", "plan", "debug"] as const) expect(names(compileToolSet(mode, []))).toContain("SwitchMode");
  });

  it("leaves out what the run cannot offer, keeping the order of the rest", () => {
    const result = names(compileToolSet("agent", [], loadToolCatalog(), new Set(["Task", "WebSearch"])));
    expect(result).toEqual(AGENT_ORDER.filter((name) => name !== "Task" && name !== "WebSearch"));
  });

  it("appends dynamic MCP tools after the static ones, sorted by name", () => {
    const result = compileToolSet("agent", [mcpTool("zeta-run"), mcpTool("alpha-fetch"), mcpTool("Mixed-case")]);
    expect(names(result)).toEqual([...AGENT_ORDER, "Mixed-case", "alpha-fetch", "zeta-run"]);
  });

  it("gives the same tool list for the same inputs in any order (prefix stability)", () => {
    const a = compileToolSet("debug", [mcpTool("b-x"), mcpTool("a-y")]);
    const b = compileToolSet("debug", [mcpTool("a-y"), mcpTool("b-x")]);
    expect(a).toEqual(b);
  });

  it("rejects a dynamic tool that clashes with a mode tool or another dynamic tool", () => {
    const withStatic = compileToolSet("agent", [mcpTool("Read")]);
    expect(withStatic.kind).toBe("protocol_error");
    const twice = compileToolSet("agent", [mcpTool("srv-a"), mcpTool("srv-a")]);
    expect(twice.kind).toBe("protocol_error");
    const empty = compileToolSet("agent", [mcpTool("")]);
    expect(empty.kind).toBe("protocol_error");
  });

  it("allows a dynamic tool named like a catalog tool that the mode does not offer", () => {
    expect(names(compileToolSet("plan", [mcpTool("AwaitShell")]))).toContain("AwaitShell");
  });

  it("takes the dynamic tool schema from input_schema_json, else from the input_schema value", () => {
    const fromText = mcpTool("srv-text", { inputSchemaJson: '{ "type": "object", "properties": { "q": { "type": "string" } } }' });
    const fromValue = mcpTool("srv-value", {
      inputSchema: fromJson(ValueSchema, { type: "object", properties: { n: { type: "number" } } }),
    });
    const bare = mcpTool("srv-bare");
    const result = compileToolSet("agent", [fromText, fromValue, bare]);
    if (result.kind !== "ok") throw new Error(result.message);
    const byName = new Map(result.tools.map((t) => [t.name, JSON.parse(t.parametersJson) as unknown]));
    expect(byName.get("srv-text")).toEqual({ type: "object", properties: { q: { type: "string" } } });
    expect(byName.get("srv-value")).toEqual({ type: "object", properties: { n: { type: "number" } } });
    expect(byName.get("srv-bare")).toEqual({ type: "object", properties: {} });
  });
});

describe("loadToolCatalog", () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  function assets(manifest: string[], tools: string[]): string {
    const dir = mkdtempSync(join(tmpdir(), "tool-catalog-"));
    dirs.push(dir);
    mkdirSync(join(dir, "modes"));
    const entries = tools.map((name) => ({ name, description: `${name} description`, parameters: { type: "object", properties: {} } }));
    writeFileSync(join(dir, "tools.json"), JSON.stringify({ tools: entries }));
    for (const mode of TOOL_MODES) writeFileSync(join(dir, "modes", `${mode}.json`), JSON.stringify({ tools: manifest }));
    return dir;
  }

  it("reads a catalog directory once and uses it for compilation", () => {
    const dir = assets(["Read", "Grep"], ["Grep", "Read"]);
    const catalog = loadToolCatalog(dir);
    expect(loadToolCatalog(dir)).toBe(catalog);
    expect(names(compileToolSet("ask", [], catalog))).toEqual(["Read", "Grep"]);
  });

  it("refuses a manifest naming a tool the catalog does not have", () => {
    expect(() => loadToolCatalog(assets(["Read", "Nope"], ["Read"]))).toThrow(ToolCatalogError);
  });

  it("refuses a catalog tool the gateway cannot execute", () => {
    expect(() => loadToolCatalog(assets(["Read"], ["Read", "GenerateImage"]))).toThrow(ToolCatalogError);
  });
});
