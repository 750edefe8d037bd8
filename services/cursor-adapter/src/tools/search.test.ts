import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { tools } from "@byok/cursor-protocol";
import { describe, expect, it } from "vitest";
import { planToolCall } from "./plan-tool-call.ts";
import { doneOf, execOf, invalidOf, testContext, variantOf, viaWire } from "./tool-test-support.ts";
import type { ExecReply } from "./types.ts";

function grepReply(init: MessageInitShape<typeof tools.GrepResultSchema>): ExecReply {
  return { case: "grepResult", value: viaWire(tools.GrepResultSchema, create(tools.GrepResultSchema, init)) };
}

function plan(name: string, args: object) {
  return planToolCall({ callId: `call_${name}`, name, argumentsJson: JSON.stringify(args) }, testContext());
}

describe("Grep", () => {
  it("maps the model's flags onto grep_args", () => {
    const request = execOf(
      plan("Grep", { pattern: "fo+", path: "/w/src", glob: "*.ts", output_mode: "content", "-A": 2, "-B": 1, "-C": 3, "-i": true, multiline: false, head_limit: 50, offset: 5, type: "ts" }),
    ).first.request;
    expect(request).toMatchObject({
      case: "grepArgs",
      value: {
        pattern: "fo+",
        path: "/w/src",
        glob: "*.ts",
        outputMode: "content",
        contextAfter: 2,
        contextBefore: 1,
        context: 3,
        caseInsensitive: true,
        multiline: false,
        headLimit: 50,
        offset: 5,
        type: "ts",
        toolCallId: "call_Grep",
      },
    });
  });

  it("formats content matches with line numbers and context markers", () => {
    const exec = execOf(plan("Grep", { pattern: "x" }));
    const outcome = doneOf(
      exec.onReply(
        grepReply({
          result: {
            case: "success",
            value: {
              pattern: "x",
              workspaceResults: {
                "/w": {
                  result: {
                    case: "content",
                    value: {
                      matches: [
                        { file: "a.ts", matches: [{ lineNumber: 3, content: "let x = 1", isContextLine: false }, { lineNumber: 4, content: "}", isContextLine: true }] },
                        { file: "b.ts", matches: [{ lineNumber: 9, content: "x()" }] },
                      ],
                      totalMatchedLines: 2,
                    },
                  },
                },
              },
            },
          },
        }),
      ),
    );
    expect(outcome.content).toBe("a.ts\n3:let x = 1\n4-}\n\nb.ts\n9:x()");
    expect(variantOf(outcome.toolCall, "grepToolCall").result?.result.case).toBe("success");
  });

  it("formats file lists, counts, truncation and empty results", () => {
    const files = doneOf(
      execOf(plan("Grep", { pattern: "x", output_mode: "files_with_matches" })).onReply(
        grepReply({ result: { case: "success", value: { workspaceResults: { "/w": { result: { case: "files", value: { files: ["a", "b"], totalFiles: 5, clientTruncated: true } } } } } } }),
      ),
    );
    expect(files.content).toBe("a\nb\n[Results truncated (showing 2 of 5 files); narrow the search or page with head_limit and offset.]");
    const counts = doneOf(
      execOf(plan("Grep", { pattern: "x", output_mode: "count" })).onReply(
        grepReply({ result: { case: "success", value: { workspaceResults: { "/w": { result: { case: "count", value: { counts: [{ file: "a", count: 3 }], totalFiles: 1, totalMatches: 3 } } } } } } }),
      ),
    );
    expect(counts.content).toBe("a:3\nTotal: 3 matches in 1 files.");
    const none = doneOf(execOf(plan("Grep", { pattern: "x" })).onReply(grepReply({ result: { case: "success", value: {} } })));
    expect(none.content).toBe("No matches found.");
  });

  it("reports ripgrep errors and bad arguments", () => {
    const failed = doneOf(execOf(plan("Grep", { pattern: "(" })).onReply(grepReply({ result: { case: "error", value: { error: "regex parse error" } } })));
    expect(failed).toMatchObject({ content: "Grep failed: regex parse error", isError: true });
    expect(invalidOf(plan("Grep", { pattern: "x", output_mode: "lines" })).error).toMatch(/"output_mode" must be one of/);
  });
});

describe("Glob", () => {
  it("lists files through grep_args with an empty pattern and converts the card result", () => {
    const p = plan("Glob", { glob_pattern: "**/*.test.ts", target_directory: "/w/src" });
    const exec = execOf(p);
    expect(exec.first.request).toMatchObject({
      case: "grepArgs",
      value: { pattern: "", glob: "**/*.test.ts", path: "/w/src", outputMode: "files_with_matches", toolCallId: "call_Glob" },
    });
    expect(variantOf(p.started, "globToolCall").args).toMatchObject({ globPattern: "**/*.test.ts", targetDirectory: "/w/src" });
    const outcome = doneOf(
      exec.onReply(grepReply({ result: { case: "success", value: { workspaceResults: { "/w": { result: { case: "files", value: { files: ["/w/src/a.test.ts"], totalFiles: 1 } } } } } } })),
    );
    expect(outcome.content).toBe("/w/src/a.test.ts");
    expect(variantOf(outcome.toolCall, "globToolCall").result?.result).toMatchObject({
      case: "success",
      value: { pattern: "**/*.test.ts", path: "/w/src", files: ["/w/src/a.test.ts"], totalFiles: 1 },
    });
  });

  it("says when nothing matched", () => {
    const outcome = doneOf(execOf(plan("Glob", { glob_pattern: "*.zig" })).onReply(grepReply({ result: { case: "success", value: {} } })));
    expect(outcome.content).toBe("No files found matching *.zig.");
  });
});
