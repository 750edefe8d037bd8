/**
 * ReadLints: one diagnostics_args exec per requested path, in order; the card
 * result (ReadLintsToolResult) gathers the per-file diagnostics.
 */
import { create } from "@bufbuild/protobuf";
import { tools } from "@byok/cursor-protocol";
import { startedCard, toolOutcome } from "./cards.ts";
import { ArgReader, clipMiddle, type ToolArgs } from "./tool-args.ts";
import type { ExecCall, ExecProgress, ExecReply, ExecStep, ToolCallInput, ToolPlan, ToolPlanContext, ToolVariant } from "./types.ts";

const MAX_MODEL_CHARS = 40_000;

export function planReadLints(call: ToolCallInput, args: ToolArgs, ctx: ToolPlanContext): ToolPlan {
  const reader = new ArgReader("ReadLints", args);
  const given = reader.optionalStringArray("paths");
  const paths = (given ?? []).filter((p) => p.trim() !== "");
  if (given !== undefined && paths.length === 0) reader.problem(`"paths" must name at least one file or directory`);
  if (given === undefined) reader.problem(`"paths" is required`);
  const lintArgs = create(tools.ReadLintsToolArgsSchema, { paths });
  const error = reader.error();
  if (error !== undefined) {
    const result = create(tools.ReadLintsToolResultSchema, { result: { case: "error", value: { errorMessage: error } } });
    return {
      kind: "invalid",
      error,
      started: startedCard(call.callId, lintsVariant(lintArgs), ctx),
      outcome: toolOutcome(call.callId, lintsVariant(lintArgs, result), ctx, error, true),
    };
  }
  return {
    kind: "exec",
    started: startedCard(call.callId, lintsVariant(lintArgs), ctx),
    exec: new ReadLintsExec(call.callId, lintArgs, ctx),
  };
}

function lintsVariant(args: tools.ReadLintsToolArgs, result?: tools.ReadLintsToolResult): ToolVariant {
  return { case: "readLintsToolCall", value: create(tools.ReadLintsToolCallSchema, { args, ...(result === undefined ? {} : { result }) }) };
}

class ReadLintsExec implements ExecCall {
  readonly first: ExecStep;
  readonly #callId: string;
  readonly #args: tools.ReadLintsToolArgs;
  readonly #ctx: ToolPlanContext;
  #index = 0;
  readonly #files: tools.FileDiagnostics[] = [];
  /** Per-path problems (not found, rejected, ...), reported to the model. */
  readonly #problems: string[] = [];

  constructor(callId: string, args: tools.ReadLintsToolArgs, ctx: ToolPlanContext) {
    this.#callId = callId;
    this.#args = args;
    this.#ctx = ctx;
    this.first = this.#step(0);
  }

  onReply(reply: ExecReply): ExecProgress {
    if (reply.case === undefined) return { kind: "waiting" };
    if (reply.case !== "diagnosticsResult") return { kind: "protocol_error", message: `diagnosticsArgs answered with ${reply.case}` };
    this.#record(reply.value);
    return this.#advance();
  }

  onThrow(error: string): ExecProgress {
    this.#problems.push(`${this.#path()}: ${error}`);
    return this.#advance();
  }

  onClosedWithoutResult(): ExecProgress {
    this.#problems.push(`${this.#path()}: no diagnostics were returned`);
    return this.#advance();
  }

  #path(): string {
    return this.#args.paths[this.#index] ?? "";
  }

  #step(index: number): ExecStep {
    const value = create(tools.DiagnosticsArgsSchema, { path: this.#args.paths[index] ?? "", toolCallId: this.#callId });
    return { request: { case: "diagnosticsArgs", value }, delayMs: 0 };
  }

  #record(result: tools.DiagnosticsResult): void {
    const requested = this.#path();
    const r = result.result;
    switch (r.case) {
      case "success":
        this.#files.push(
          create(tools.FileDiagnosticsSchema, {
            path: r.value.path || requested,
            diagnostics: r.value.diagnostics.map((d) => ({
              severity: d.severity,
              range: { start: d.range?.start ?? {}, end: d.range?.end ?? {} },
              message: d.message,
              source: d.source,
              code: d.code,
              isStale: d.isStale,
            })),
            diagnosticsCount: r.value.diagnostics.length,
          }),
        );
        return;
      case "error":
        this.#problems.push(`${r.value.path || requested}: ${r.value.error}`);
        return;
      case "rejected":
        this.#problems.push(`${r.value.path || requested}: rejected${r.value.reason === "" ? "" : ` (${r.value.reason})`}`);
        return;
      case "fileNotFound":
        this.#problems.push(`${r.value.path || requested}: file not found`);
        return;
      case "permissionDenied":
        this.#problems.push(`${r.value.path || requested}: permission denied`);
        return;
      case undefined:
        this.#problems.push(`${requested}: no diagnostics were returned`);
        return;
      default: {
        const unreachable: never = r;
        throw new Error(`unknown diagnostics result ${String(unreachable)}`);
      }
    }
  }

  #advance(): ExecProgress {
    this.#index += 1;
    if (this.#index < this.#args.paths.length) return { kind: "next", step: this.#step(this.#index) };
    const totalDiagnostics = this.#files.reduce((sum, f) => sum + f.diagnostics.length, 0);
    const allFailed = this.#files.length === 0 && this.#problems.length > 0;
    const result = allFailed
      ? create(tools.ReadLintsToolResultSchema, { result: { case: "error", value: { errorMessage: this.#problems.join("\n") } } })
      : create(tools.ReadLintsToolResultSchema, {
          result: { case: "success", value: { fileDiagnostics: this.#files, totalFiles: this.#files.length, totalDiagnostics } },
        });
    const content = clipMiddle(diagnosticsText(this.#files, this.#problems), MAX_MODEL_CHARS);
    return { kind: "done", outcome: toolOutcome(this.#callId, lintsVariant(this.#args, result), this.#ctx, content, allFailed) };
  }
}

const SEVERITY_NAMES: Record<number, string> = {
  [tools.DiagnosticSeverity.ERROR]: "error",
  [tools.DiagnosticSeverity.WARNING]: "warning",
  [tools.DiagnosticSeverity.INFORMATION]: "info",
  [tools.DiagnosticSeverity.HINT]: "hint",
};

export function diagnosticsText(files: readonly tools.FileDiagnostics[], problems: readonly string[]): string {
  const lines: string[] = [];
  for (const file of files) {
    if (file.diagnostics.length === 0) continue;
    if (lines.length > 0) lines.push("");
    lines.push(`${file.path}:`);
    for (const d of file.diagnostics) {
      const at = d.range?.start === undefined ? "" : `line ${d.range.start.line}, column ${d.range.start.column}: `;
      const origin = [d.source, d.code].filter((s) => s !== "").join(" ");
      lines.push(`  ${at}[${SEVERITY_NAMES[d.severity] ?? "diagnostic"}] ${d.message}${origin === "" ? "" : ` (${origin})`}${d.isStale ? " [stale]" : ""}`);
    }
  }
  if (lines.length === 0) lines.push("No linter errors found.");
  if (problems.length > 0) lines.push("", "Could not check:", ...problems.map((p) => `  ${p}`));
  return lines.join("\n");
}
