import { create } from "@bufbuild/protobuf";
import { tools } from "@byok/cursor-protocol";
import { describe, expect, it } from "vitest";
import { withReadPaths } from "./files.ts";
import { planToolCall } from "./plan-tool-call.ts";
import { doneOf, execOf, invalidOf, testContext, variantOf, viaWire } from "./tool-test-support.ts";
import type { ExecReply } from "./types.ts";

function read(args: object) {
  return planToolCall({ callId: "call_r", name: "Read", argumentsJson: JSON.stringify(args) }, testContext());
}

function readReply(init: Parameters<typeof create<typeof tools.ReadResultSchema>>[1]): ExecReply {
  return { case: "readResult", value: viaWire(tools.ReadResultSchema, create(tools.ReadResultSchema, init)) };
}

describe("Read", () => {
  it("encodes read_args and returns the content with a read_paths effect", () => {
    const plan = read({ path: "/w/a.ts", offset: 10, limit: 20 });
    const exec = execOf(plan);
    expect(exec.first.request).toMatchObject({ case: "readArgs", value: { path: "/w/a.ts", toolCallId: "call_r", offset: 10, limit: 20 } });
    expect(variantOf(plan.started, "readToolCall").args).toMatchObject({ path: "/w/a.ts", offset: 10, limit: 20 });
    const outcome = doneOf(
      exec.onReply(readReply({ result: { case: "success", value: { path: "/w/a.ts", totalLines: 2, fileSize: 12n, output: { case: "content", value: "line1\nline2\n" } } } })),
    );
    expect(outcome).toMatchObject({ content: "line1\nline2\n", isError: false, effects: [{ kind: "read_path", path: "/w/a.ts" }] });
    expect(variantOf(outcome.toolCall, "readToolCall").result?.result).toMatchObject({
      case: "success",
      value: { path: "/w/a.ts", totalLines: 2, fileSize: 12, isEmpty: false, output: { case: "content", value: "line1\nline2\n" } },
    });
  });

  it("tells the model about truncation and empty files", () => {
    const truncated = doneOf(
      execOf(read({ path: "/w/big" })).onReply(
        readReply({ result: { case: "success", value: { path: "/w/big", totalLines: 9000, truncated: true, output: { case: "content", value: "x" } } } }),
      ),
    );
    expect(truncated.content).toBe("x\n\n[Output truncated: the file has 9000 lines; use offset and limit to read the rest.]");
    const empty = doneOf(execOf(read({ path: "/w/e" })).onReply(readReply({ result: { case: "success", value: { output: { case: "content", value: "" } } } })));
    expect(empty.content).toBe("File is empty.");
    expect(variantOf(empty.toolCall, "readToolCall").result?.result).toMatchObject({ value: { isEmpty: true, path: "/w/e" } });
  });

  it("describes binary files instead of returning bytes", () => {
    const outcome = doneOf(
      execOf(read({ path: "/w/i.png" })).onReply(readReply({ result: { case: "success", value: { path: "/w/i.png", output: { case: "data", value: new Uint8Array([1, 2, 3]) } } } })),
    );
    expect(outcome.content).toBe("Read binary file /w/i.png (3 bytes); its content cannot be shown as text.");
    expect(variantOf(outcome.toolCall, "readToolCall").result?.result).toMatchObject({ value: { output: { case: "data" } } });
  });

  it("maps client failures to a typed error card and no read_paths effect", () => {
    const missing = doneOf(execOf(read({ path: "/w/x" })).onReply(readReply({ result: { case: "fileNotFound", value: { path: "/w/x" } } })));
    expect(missing).toMatchObject({ content: "File not found: /w/x", isError: true, effects: [] });
    expect(variantOf(missing.toolCall, "readToolCall").result?.result).toMatchObject({ case: "error", value: { errorMessage: "File not found: /w/x" } });
    const rejected = doneOf(execOf(read({ path: "/w/x" })).onReply(readReply({ result: { case: "rejected", value: { reason: "private" } } })));
    expect(rejected.content).toBe("The user rejected reading /w/x: private");
  });

  it("rejects a missing path", () => {
    expect(invalidOf(read({})).error).toBe('Invalid arguments for Read: "path" is required.');
  });
});

describe("withReadPaths", () => {
  it("adds each successfully read path once, keeping order", () => {
    expect(
      withReadPaths(["/a"], [
        { kind: "read_path", path: "/b" },
        { kind: "read_path", path: "/a" },
        { kind: "todos", todos: [] },
      ]),
    ).toEqual(["/a", "/b"]);
  });
});

describe("Delete", () => {
  function del(args: object) {
    return planToolCall({ callId: "call_d", name: "Delete", argumentsJson: JSON.stringify(args) }, testContext());
  }
  const reply = (result: tools.DeleteResult["result"]): ExecReply => ({
    case: "deleteResult",
    value: viaWire(tools.DeleteResultSchema, create(tools.DeleteResultSchema, { result })),
  });

  it("deletes and passes the client's result to the card", () => {
    const exec = execOf(del({ path: "/w/old.ts" }));
    expect(exec.first.request).toMatchObject({ case: "deleteArgs", value: { path: "/w/old.ts", toolCallId: "call_d" } });
    const outcome = doneOf(exec.onReply(reply({ case: "success", value: create(tools.DeleteSuccessSchema, { path: "/w/old.ts" }) })));
    expect(outcome).toMatchObject({ content: "Deleted /w/old.ts.", isError: false });
    expect(variantOf(outcome.toolCall, "deleteToolCall").result?.result.case).toBe("success");
  });

  it("reports a directory or a missing file as errors", () => {
    const notFile = doneOf(execOf(del({ path: "/w/dir" })).onReply(reply({ case: "notFile", value: create(tools.DeleteNotFileSchema, { actualType: "directory" }) })));
    expect(notFile).toMatchObject({ content: "/w/dir is not a file (it is a directory).", isError: true });
    const missing = doneOf(execOf(del({ path: "/w/x" })).onReply(reply({ case: "fileNotFound", value: create(tools.DeleteFileNotFoundSchema) })));
    expect(missing.content).toBe("File not found: /w/x");
  });
});
