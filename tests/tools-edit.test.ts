/**
 * End to end: file edits as the IDE sees them. StrReplace and Write are a
 * hidden read of the file, then a write of the complete new content; CRLF/CR
 * come back as LF; an old_string that is not there exactly once is an error
 * the model reads, not a crash; Write's content streams into the card while the
 * model is still generating it. EditNotebook goes the same way: the notebook
 * is read, one cell changes, the whole notebook is written.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { tools } from "@byok/cursor-protocol";
import type { ExecContext } from "@byok/test-support/fake-cursor";
import { startGateway, type GatewayHarness } from "@byok/test-support/gateway-harness";
import { afterLastUser, chatMessages, textOf } from "@byok/test-support/chat-requests";
import { completedCard, enqueueChat, execArgs, finishedOk, readNotFound, readSuccess, toolUpdates, writeSuccess } from "./tools-support.ts";

const CRLF_FILE = "/home/dev/project/win.ts";
const DUP_FILE = "/home/dev/project/dup.ts";
const NEW_FILE = "/home/dev/project/notes.md";

describe("edits end to end", () => {
  let gw: GatewayHarness;
  beforeEach(async () => {
    gw = await startGateway();
  });
  afterEach(async () => {
    await gw.stop();
  });

  it("StrReplace writes CRLF files back as LF; zero or two matches are tool errors the model sees; Write streams its content", async () => {
    const disk = new Map<string, string>([
      [CRLF_FILE, "// header\r\nconst limit = 10;\r\nexport { limit };\r\n"],
      [DUP_FILE, "let x = 1;\nlet x = 1;\n"],
    ]);
    const notes = "# Notes\n\n- first \"quoted\" item\n- second item with a tab\there\n";
    enqueueChat(gw, {
      id: "chatcmpl-edit-1",
      text: "Editing now.",
      argChunk: 5,
      calls: [
        { id: "call_edit_crlf", name: "StrReplace", args: { path: CRLF_FILE, old_string: "const limit = 10;", new_string: "const limit = 20;" } },
        { id: "call_edit_none", name: "StrReplace", args: { path: CRLF_FILE, old_string: "const missing = 0;", new_string: "x" } },
        { id: "call_edit_twice", name: "StrReplace", args: { path: DUP_FILE, old_string: "let x = 1;", new_string: "let x = 2;" } },
        { id: "call_write_new", name: "Write", args: { path: NEW_FILE, contents: notes } },
      ],
    });
    enqueueChat(gw, { id: "chatcmpl-edit-2", text: "One edit applied, two need another look." });

    const writes: Array<{ path: string; fileText: string; toolCallId: string }> = [];
    const reads: string[] = [];
    const onExec = {
      readArgs: async (ctx: ExecContext) => {
        const { path } = execArgs<tools.ReadArgs>(ctx);
        reads.push(path);
        const content = disk.get(path);
        await ctx.reply(content === undefined ? readNotFound(path) : readSuccess(path, content));
      },
      writeArgs: async (ctx: ExecContext) => {
        const args = execArgs<tools.WriteArgs>(ctx);
        writes.push({ path: args.path, fileText: args.fileText, toolCallId: args.toolCallId });
        disk.set(args.path, args.fileText);
        await ctx.reply(writeSuccess(args.path, args.fileText));
      },
    };
    const result = await finishedOk(gw.client().conversation().send("Bump the limit and write notes.", { modelId: gw.modelId, onExec }));
    expect(result.violations, result.describe()).toEqual([]);
    expect(result.text).toContain("One edit applied");

    // Only the two edits that apply are written, each with the complete file, LF only.
    expect(writes.map((w) => w.path).sort()).toEqual([CRLF_FILE, NEW_FILE].sort());
    const crlfWrite = writes.find((w) => w.path === CRLF_FILE)!;
    expect(crlfWrite.fileText).toBe("// header\nconst limit = 20;\nexport { limit };\n");
    expect(crlfWrite.toolCallId).toBe("call_edit_crlf");
    expect(writes.find((w) => w.path === NEW_FILE)!.fileText).toBe(notes);
    expect(disk.get(DUP_FILE)).toBe("let x = 1;\nlet x = 1;\n");
    // Every edit read the file first (hidden read), the new file included.
    expect(reads.sort()).toEqual([CRLF_FILE, CRLF_FILE, DUP_FILE, NEW_FILE].sort());

    // What the model saw next: success for the applied edits, the reason for the two that did not apply.
    const loop = afterLastUser(chatMessages(gw.llm.requestsTo("openai-chat")[1]));
    const toolText = (id: string) => textOf(loop.find((m) => m.role === "tool" && m.tool_call_id === id)?.content);
    expect(toolText("call_edit_none")).toContain("old_string was not found");
    expect(toolText("call_edit_twice")).toContain("occurs 2 times");
    expect(toolText("call_edit_crlf")).not.toMatch(/not found|occurs/);
    const stored = await gw.store("getRevisionMessages", { revisionId: (await gw.store("getRun", { runId: result.requestId })).run!.headRevisionId });
    const results = stored.messages.flatMap((m) => (m.body.case === "toolResult" ? [m.body.value] : []));
    expect(Object.fromEntries(results.map((r) => [r.callId, r.isError]))).toEqual({
      call_edit_crlf: false,
      call_edit_none: true,
      call_edit_twice: true,
      call_write_new: false,
    });

    // The cards: the failed edits complete with a typed error, the applied one with before/after content.
    const crlfCard = completedCard(result, "call_edit_crlf");
    const crlfResult = crlfCard?.tool.case === "editToolCall" ? crlfCard.tool.value.result?.result : undefined;
    expect(crlfResult?.case).toBe("success");
    expect(crlfResult?.case === "success" && crlfResult.value.afterFullFileContent).toBe("// header\nconst limit = 20;\nexport { limit };\n");
    const noneCard = completedCard(result, "call_edit_none");
    expect(noneCard?.tool.case === "editToolCall" && noneCard.tool.value.result?.result.case).toBe("error");

    // Write: the content streamed into the card as the model generated it, before the tool started.
    const writeUpdates = toolUpdates(result).filter((u) => u.callId === "call_write_new");
    const streamed = writeUpdates
      .flatMap((u) => (u.update.case === "toolCallDelta" && u.update.value.toolCallDelta?.delta.case === "editToolCallDelta" ? [u.update.value.toolCallDelta.delta.value.streamContentDelta] : []))
      .join("");
    expect(streamed).toBe(notes);
    const deltas = writeUpdates.filter((u) => u.case === "toolCallDelta");
    expect(deltas.length).toBeGreaterThan(3);
    const started = writeUpdates.find((u) => u.case === "toolCallStarted")!;
    expect(deltas.every((d) => d.order < started.order)).toBe(true);
    const pathCard = writeUpdates.find((u) => u.update.case === "partialToolCall" && u.update.value.toolCall?.tool.case === "editToolCall" && u.update.value.toolCall.tool.value.args?.path === NEW_FILE);
    expect(pathCard, "a partial card with the path").toBeDefined();
  });

  it("EditNotebook reads the notebook, changes one cell and writes the whole notebook; a bad cell index is a tool error", async () => {
    const path = "/home/dev/project/analysis.ipynb";
    const notebook = `${JSON.stringify(
      {
        cells: [
          { cell_type: "markdown", metadata: {}, source: ["# Analysis"] },
          { cell_type: "code", execution_count: 1, metadata: {}, outputs: [{ output_type: "stream", name: "stdout", text: ["10\n"] }], source: ["n = 10\n", "print(n)"] },
        ],
        metadata: {},
        nbformat: 4,
        nbformat_minor: 4,
      },
      null,
      1,
    )}\n`;
    enqueueChat(gw, {
      id: "chatcmpl-nb-1",
      calls: [
        { id: "call_nb_edit", name: "EditNotebook", args: { target_notebook: path, cell_idx: 1, is_new_cell: false, cell_language: "python", old_string: "n = 10", new_string: "n = 20" } },
        { id: "call_nb_bad", name: "EditNotebook", args: { target_notebook: path, cell_idx: 7, is_new_cell: false, cell_language: "python", old_string: "x", new_string: "y" } },
      ],
    });
    enqueueChat(gw, { id: "chatcmpl-nb-2", text: "Cell 1 now uses 20." });
    const writes: Array<{ path: string; fileText: string }> = [];
    const onExec = {
      readArgs: async (ctx: ExecContext) => {
        await ctx.reply(readSuccess(execArgs<tools.ReadArgs>(ctx).path, notebook));
      },
      writeArgs: async (ctx: ExecContext) => {
        const args = execArgs<tools.WriteArgs>(ctx);
        writes.push({ path: args.path, fileText: args.fileText });
        await ctx.reply(writeSuccess(args.path, args.fileText));
      },
    };
    const result = await finishedOk(gw.client().conversation().send("Use 20 in the notebook.", { modelId: gw.modelId, onExec }));
    expect(result.violations, result.describe()).toEqual([]);
    expect(writes).toHaveLength(1);
    const written = JSON.parse(writes[0]!.fileText) as { cells: Array<{ source: string[]; outputs?: unknown[] }> };
    expect(written.cells[1]).toMatchObject({ source: ["n = 20\n", "print(n)"], outputs: [] });
    expect(written.cells[0]).toEqual({ cell_type: "markdown", metadata: {}, source: ["# Analysis"] });
    const loop = afterLastUser(chatMessages(gw.llm.requestsTo("openai-chat")[1]));
    const toolText = (id: string) => textOf(loop.find((m) => m.tool_call_id === id)?.content);
    expect(toolText("call_nb_edit")).toMatch(/^Edited cell 1 of \/home\/dev\/project\/analysis\.ipynb \(\+\d+ -\d+ lines\)\.$/);
    expect(toolText("call_nb_bad")).toBe(`cell_idx 7 does not exist: ${path} has 2 cells (0 to 1).`);
    const card = completedCard(result, "call_nb_edit");
    expect(card?.tool.case === "editToolCall" && card.tool.value.result?.result.case).toBe("success");
  });
});
