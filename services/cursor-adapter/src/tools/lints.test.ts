import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { tools } from "@byok/cursor-protocol";
import { describe, expect, it } from "vitest";
import { planToolCall } from "./plan-tool-call.ts";
import { doneOf, execOf, invalidOf, testContext, variantOf, viaWire } from "./tool-test-support.ts";
import type { ExecProgress, ExecReply } from "./types.ts";

function reply(init: MessageInitShape<typeof tools.DiagnosticsResultSchema>): ExecReply {
  return { case: "diagnosticsResult", value: viaWire(tools.DiagnosticsResultSchema, create(tools.DiagnosticsResultSchema, init)) };
}

function lints(args: object) {
  return planToolCall({ callId: "call_l", name: "ReadLints", argumentsJson: JSON.stringify(args) }, testContext());
}

function nextPath(progress: ExecProgress): string {
  if (progress.kind !== "next" || progress.step.request.case !== "diagnosticsArgs") throw new Error(`expected diagnostics_args, got ${progress.kind}`);
  return progress.step.request.value.path;
}

describe("ReadLints", () => {
  it("asks for diagnostics one path at a time and gathers them into one card", () => {
    const exec = execOf(lints({ paths: ["/w/a.ts", "/w/b.ts"] }));
    expect(exec.first.request).toMatchObject({ case: "diagnosticsArgs", value: { path: "/w/a.ts", toolCallId: "call_l" } });
    const second = exec.onReply(
      reply({
        result: {
          case: "success",
          value: {
            path: "/w/a.ts",
            diagnostics: [
              { severity: tools.DiagnosticSeverity.ERROR, range: { start: { line: 4, column: 2 }, end: { line: 4, column: 9 } }, message: "x is not defined", source: "ts", code: "2304" },
            ],
            totalDiagnostics: 1,
          },
        },
      }),
    );
    expect(nextPath(second)).toBe("/w/b.ts");
    const outcome = doneOf(exec.onReply(reply({ result: { case: "fileNotFound", value: { path: "/w/b.ts" } } })));
    expect(outcome.isError).toBe(false);
    expect(outcome.content).toBe(
      "/w/a.ts:\n  line 4, column 2: [error] x is not defined (ts 2304)\n\nCould not check:\n  /w/b.ts: file not found",
    );
    expect(variantOf(outcome.toolCall, "readLintsToolCall").result?.result).toMatchObject({
      case: "success",
      value: {
        totalFiles: 1,
        totalDiagnostics: 1,
        fileDiagnostics: [{ path: "/w/a.ts", diagnosticsCount: 1, diagnostics: [{ message: "x is not defined", range: { start: { line: 4, column: 2 } } }] }],
      },
    });
  });

  it("says so when there is nothing to report", () => {
    const outcome = doneOf(execOf(lints({ paths: ["/w/a.ts"] })).onReply(reply({ result: { case: "success", value: { path: "/w/a.ts" } } })));
    expect(outcome.content).toBe("No linter errors found.");
  });

  it("fails when every path failed, and requires at least one path", () => {
    const outcome = doneOf(execOf(lints({ paths: ["/w/a.ts"] })).onThrow("no language server"));
    expect(outcome).toMatchObject({ isError: true });
    expect(variantOf(outcome.toolCall, "readLintsToolCall").result?.result.case).toBe("error");
    expect(invalidOf(lints({ paths: [] })).error).toMatch(/at least one/);
    expect(invalidOf(lints({})).error).toMatch(/"paths" is required/);
  });
});
