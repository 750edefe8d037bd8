import { describe, expect, it } from "vitest";
import type { EditorClient } from "../acp/editor-client.ts";
import type { ToolContext } from "./tool-context.ts";
import { editFile, writeFile } from "./write-files.ts";

function context(files: Map<string, string>, answer: "allow-once" | "reject-once" = "allow-once"): { ctx: ToolContext; asked: number } {
  const state = { asked: 0 };
  const editor = {
    readTextFile: async (_s: string, path: string) => {
      const text = files.get(path);
      if (text === undefined) throw new Error("not found");
      return text;
    },
    writeTextFile: async (_s: string, path: string, content: string) => void files.set(path, content),
  } as unknown as EditorClient;
  const ctx: ToolContext = {
    sessionId: "s",
    cwd: "/w",
    callId: "c",
    editor,
    permissions: { ask: async () => (state.asked++, { outcome: "selected", optionId: answer }), allowedAlways: () => new Set(), rememberAlways: () => undefined },
    limits: { commandTimeoutMs: 1000, commandMaxTimeoutMs: 1000, commandOutputLimit: 1000, readLimitChars: 1000 },
    signal: new AbortController().signal,
    show: () => undefined,
    plan: () => undefined,
  };
  return {
    ctx,
    get asked() {
      return state.asked;
    },
  };
}

describe("edit_file and write_file", () => {
  it("replaces exactly one occurrence, and every one with replace_all", async () => {
    const files = new Map([["/w/a.ts", "let x = 1; let y = 1;"]]);
    const t = context(files);
    expect((await editFile({ path: "a.ts", old_string: "let x = 1", new_string: "let x = 2" }, t.ctx)).isError).toBe(false);
    expect(files.get("/w/a.ts")).toBe("let x = 2; let y = 1;");
    expect((await editFile({ path: "/w/a.ts", old_string: "= ", new_string: ":= ", replace_all: true }, t.ctx)).isError).toBe(false);
    expect(files.get("/w/a.ts")).toBe("let x := 2; let y := 1;");
  });

  it("tells the model about a missing or ambiguous old_string without asking the member", async () => {
    const files = new Map([["/w/a.ts", "a a"]]);
    const t = context(files);
    expect((await editFile({ path: "/w/a.ts", old_string: "b", new_string: "c" }, t.ctx)).content).toContain("does not occur");
    expect((await editFile({ path: "/w/a.ts", old_string: "a", new_string: "c" }, t.ctx)).content).toContain("occurs 2 times");
    expect(t.asked).toBe(0);
    expect(files.get("/w/a.ts")).toBe("a a");
  });

  it("writes nothing when the member rejects, and says so", async () => {
    const files = new Map<string, string>();
    const t = context(files, "reject-once");
    const outcome = await writeFile({ path: "/w/new.txt", content: "x" }, t.ctx, true);
    expect(outcome).toMatchObject({ isError: true, view: { status: "failed" } });
    expect(files.has("/w/new.txt")).toBe(false);
  });
});
