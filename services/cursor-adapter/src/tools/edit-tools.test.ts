import { create } from "@bufbuild/protobuf";
import { tools } from "@byok/cursor-protocol";
import { describe, expect, it } from "vitest";
import { planToolCall } from "./plan-tool-call.ts";
import { doneOf, execOf, invalidOf, testContext, variantOf, viaWire } from "./tool-test-support.ts";
import type { ExecProgress, ExecReply } from "./types.ts";

function readReply(init: Parameters<typeof create<typeof tools.ReadResultSchema>>[1]): ExecReply {
  return { case: "readResult", value: viaWire(tools.ReadResultSchema, create(tools.ReadResultSchema, init)) };
}

const fileContent = (content: string): ExecReply =>
  readReply({ result: { case: "success", value: { path: "/w/a.ts", output: { case: "content", value: content } } } });

const writeOk: ExecReply = {
  case: "writeResult",
  value: viaWire(tools.WriteResultSchema, create(tools.WriteResultSchema, { result: { case: "success", value: { path: "/w/a.ts" } } })),
};

function nextWrite(progress: ExecProgress): tools.WriteArgs {
  if (progress.kind !== "next") throw new Error(`expected a write step, got ${progress.kind}`);
  const request = progress.step.request;
  if (request.case !== "writeArgs") throw new Error(`expected write_args, got ${request.case}`);
  return request.value;
}

function strReplace(args: object, callId = "call_edit") {
  return planToolCall({ callId, name: "StrReplace", argumentsJson: JSON.stringify(args) }, testContext());
}

describe("StrReplace", () => {
  it("reads the file, writes back the COMPLETE file with LF endings, and reports the edit", () => {
    const plan = strReplace({ path: "/w/a.ts", old_string: "b = 2", new_string: "b = 3" });
    const exec = execOf(plan);
    expect(exec.first.request).toMatchObject({ case: "readArgs", value: { path: "/w/a.ts", toolCallId: "call_edit" } });
    expect(variantOf(plan.started, "editToolCall").args).toMatchObject({ path: "/w/a.ts", streamContent: "b = 3" });

    const write = nextWrite(exec.onReply(fileContent("a = 1\r\nb = 2\r\nc = 3\r\n")));
    expect(write).toMatchObject({ path: "/w/a.ts", fileText: "a = 1\nb = 3\nc = 3\n", toolCallId: "call_edit" });

    const outcome = doneOf(exec.onReply(writeOk));
    expect(outcome.isError).toBe(false);
    expect(outcome.content).toBe("Edited /w/a.ts: 1 replacement (+1 -1 lines).");
    const card = variantOf(outcome.toolCall, "editToolCall");
    expect(card.result?.result).toMatchObject({
      case: "success",
      value: {
        path: "/w/a.ts",
        linesAdded: 1,
        linesRemoved: 1,
        beforeFullFileContent: "a = 1\nb = 2\nc = 3\n",
        afterFullFileContent: "a = 1\nb = 3\nc = 3\n",
      },
    });
    expect(outcome.toolCall.toolCallId).toBe("call_edit");
    expect(outcome.toolCall.completedAtMs).toBeDefined();
  });

  it("turns a missing old_string into an error the model sees, without writing", () => {
    const exec = execOf(strReplace({ path: "/w/a.ts", old_string: "nope", new_string: "x" }));
    const outcome = doneOf(exec.onReply(fileContent("a\nb\n")));
    expect(outcome.isError).toBe(true);
    expect(outcome.content).toMatch(/old_string was not found in \/w\/a\.ts/);
    expect(variantOf(outcome.toolCall, "editToolCall").result?.result.case).toBe("error");
  });

  it("turns two matches into an error unless replace_all is set", () => {
    const twice = "x = 1\ny\nx = 1\n";
    const single = execOf(strReplace({ path: "/w/a.ts", old_string: "x = 1", new_string: "x = 2" }));
    const refused = doneOf(single.onReply(fileContent(twice)));
    expect(refused.isError).toBe(true);
    expect(refused.content).toMatch(/occurs 2 times/);

    const all = execOf(strReplace({ path: "/w/a.ts", old_string: "x = 1", new_string: "x = 2", replace_all: true }));
    expect(nextWrite(all.onReply(fileContent(twice))).fileText).toBe("x = 2\ny\nx = 2\n");
    expect(doneOf(all.onReply(writeOk)).content).toBe("Edited /w/a.ts: 2 replacements (+2 -2 lines).");
  });

  it("reports a missing file with the file_not_found card result", () => {
    const exec = execOf(strReplace({ path: "/w/a.ts", old_string: "x", new_string: "y" }));
    const outcome = doneOf(exec.onReply(readReply({ result: { case: "fileNotFound", value: { path: "/w/a.ts" } } })));
    expect(outcome).toMatchObject({ isError: true, content: "File not found: /w/a.ts" });
    expect(variantOf(outcome.toolCall, "editToolCall").result?.result.case).toBe("fileNotFound");
  });

  it("refuses to edit a file the client returned truncated", () => {
    const exec = execOf(strReplace({ path: "/w/a.ts", old_string: "x", new_string: "y" }));
    const reply = readReply({ result: { case: "success", value: { path: "/w/a.ts", truncated: true, output: { case: "content", value: "x" } } } });
    expect(doneOf(exec.onReply(reply)).content).toMatch(/too large to edit in place/);
  });

  it("maps a rejected write to the rejected card result", () => {
    const exec = execOf(strReplace({ path: "/w/a.ts", old_string: "a", new_string: "b" }));
    nextWrite(exec.onReply(fileContent("a")));
    const rejected: ExecReply = {
      case: "writeResult",
      value: create(tools.WriteResultSchema, { result: { case: "rejected", value: { path: "/w/a.ts", reason: "not now" } } }),
    };
    const outcome = doneOf(exec.onReply(rejected));
    expect(outcome).toMatchObject({ isError: true, content: "The user rejected the edit of /w/a.ts: not now" });
    expect(variantOf(outcome.toolCall, "editToolCall").result?.result).toMatchObject({ case: "rejected", value: { reason: "not now" } });
  });

  it("treats a reply of the wrong kind as a protocol error and a throw as a tool error", () => {
    const exec = execOf(strReplace({ path: "/w/a.ts", old_string: "a", new_string: "b" }));
    expect(exec.onReply(writeOk).kind).toBe("protocol_error");
    expect(exec.onReply({ case: undefined })).toEqual({ kind: "waiting" });
    const thrown = doneOf(exec.onThrow("EACCES"));
    expect(thrown).toMatchObject({ isError: true, content: "Error reading /w/a.ts: EACCES" });
  });

  it("rejects missing arguments before anything runs", () => {
    const plan = invalidOf(strReplace({ path: "/w/a.ts", new_string: "b" }));
    expect(plan.error).toBe('Invalid arguments for StrReplace: "old_string" is required.');
    expect(plan.outcome.isError).toBe(true);
    expect(variantOf(plan.outcome.toolCall, "editToolCall").result?.result.case).toBe("error");
  });
});

describe("Write", () => {
  function write(args: object) {
    return planToolCall({ callId: "call_w", name: "Write", argumentsJson: JSON.stringify(args) }, testContext());
  }

  it("creates a missing file with the full LF-normalized content", () => {
    const exec = execOf(write({ path: "/w/new.txt", contents: "one\r\ntwo\r\n" }));
    const args = nextWrite(exec.onReply(readReply({ result: { case: "fileNotFound", value: { path: "/w/new.txt" } } })));
    expect(args).toMatchObject({ path: "/w/new.txt", fileText: "one\ntwo\n" });
    const outcome = doneOf(exec.onReply(writeOk));
    expect(outcome.content).toBe("Created /w/new.txt (+2 -0 lines).");
    expect(variantOf(outcome.toolCall, "editToolCall").result?.result).toMatchObject({
      case: "success",
      value: { beforeFullFileContent: "", afterFullFileContent: "one\ntwo\n", linesAdded: 2, linesRemoved: 0 },
    });
  });

  it("overwrites an existing file and diffs against its old content", () => {
    const exec = execOf(write({ path: "/w/a.ts", contents: "a\nB\n" }));
    nextWrite(exec.onReply(fileContent("a\r\nb\r\n")));
    const outcome = doneOf(exec.onReply(writeOk));
    expect(outcome.content).toBe("Wrote /w/a.ts (+1 -1 lines).");
  });

  it("stops when the hidden read is denied", () => {
    const exec = execOf(write({ path: "/w/a.ts", contents: "x" }));
    const outcome = doneOf(exec.onReply(readReply({ result: { case: "permissionDenied", value: { path: "/w/a.ts" } } })));
    expect(outcome.isError).toBe(true);
    expect(variantOf(outcome.toolCall, "editToolCall").result?.result.case).toBe("readPermissionDenied");
  });

  it("reports a permission-denied write", () => {
    const exec = execOf(write({ path: "/w/a.ts", contents: "x" }));
    nextWrite(exec.onReply(fileContent("")));
    const denied: ExecReply = {
      case: "writeResult",
      value: create(tools.WriteResultSchema, { result: { case: "permissionDenied", value: { path: "/w/a.ts", error: "read-only", isReadonly: true } } }),
    };
    const outcome = doneOf(exec.onReply(denied));
    expect(outcome).toMatchObject({ isError: true, content: "Permission denied writing /w/a.ts: read-only" });
    expect(variantOf(outcome.toolCall, "editToolCall").result?.result.case).toBe("writePermissionDenied");
  });
});
