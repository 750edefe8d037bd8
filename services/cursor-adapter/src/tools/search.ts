/**
 * Grep and Glob: both run the client's ripgrep through grep_args. Glob is a
 * file listing (empty pattern, glob filter, files_with_matches); its card
 * result is converted to GlobToolResult.
 */
import { create } from "@bufbuild/protobuf";
import { tools } from "@byok/cursor-protocol";
import { startedCard, toolOutcome } from "./cards.ts";
import { singleStepPlan, type OutcomeParts } from "./single-step.ts";
import { ArgReader, clipMiddle, type ToolArgs } from "./tool-args.ts";
import type { ToolCallInput, ToolPlan, ToolPlanContext, ToolVariant } from "./types.ts";

const OUTPUT_MODES = ["content", "files_with_matches", "count"];
const MAX_MODEL_CHARS = 60_000;

// ---- Grep ----

export function planGrep(call: ToolCallInput, args: ToolArgs, ctx: ToolPlanContext): ToolPlan {
  const reader = new ArgReader("Grep", args);
  const pattern = reader.requiredString("pattern");
  const outputMode = reader.optionalString("output_mode");
  if (outputMode !== undefined && !OUTPUT_MODES.includes(outputMode)) reader.problem(`"output_mode" must be one of ${OUTPUT_MODES.join(", ")}`);
  const optional = {
    path: reader.optionalString("path"),
    glob: reader.optionalString("glob"),
    type: reader.optionalString("type"),
    outputMode,
    contextAfter: reader.optionalInteger("-A", { min: 0 }),
    contextBefore: reader.optionalInteger("-B", { min: 0 }),
    context: reader.optionalInteger("-C", { min: 0 }),
    caseInsensitive: reader.optionalBoolean("-i"),
    multiline: reader.optionalBoolean("multiline"),
    headLimit: reader.optionalInteger("head_limit", { min: 0 }),
    offset: reader.optionalInteger("offset", { min: 0 }),
  };
  const grepArgs = create(tools.GrepArgsSchema, { pattern, toolCallId: call.callId, ...definedOnly(optional) });
  const failed = (error: string) =>
    toolOutcome(call.callId, grepVariant(grepArgs, create(tools.GrepResultSchema, { result: { case: "error", value: { error } } })), ctx, error, true);
  const error = reader.error();
  if (error !== undefined) return { kind: "invalid", error, started: startedCard(call.callId, grepVariant(grepArgs), ctx), outcome: failed(error) };
  return singleStepPlan(call.callId, ctx, (result?: tools.GrepResult) => grepVariant(grepArgs, result), { case: "grepArgs", value: grepArgs }, "grepResult", grepOutcomeParts, failed);
}

function grepVariant(args: tools.GrepArgs, result?: tools.GrepResult): ToolVariant {
  return { case: "grepToolCall", value: create(tools.GrepToolCallSchema, { args, ...(result === undefined ? {} : { result }) }) };
}

function grepOutcomeParts(reply: tools.GrepResult): OutcomeParts<tools.GrepResult> {
  const r = reply.result;
  switch (r.case) {
    case "success":
      return { result: reply, content: clipMiddle(grepText(r.value), MAX_MODEL_CHARS), isError: false, effects: [] };
    case "error":
      return { result: reply, content: `Grep failed: ${r.value.error}`, isError: true, effects: [] };
    case undefined:
      return { result: reply, content: "Grep returned no result.", isError: true, effects: [] };
    default: {
      const unreachable: never = r;
      throw new Error(`unknown grep result ${String(unreachable)}`);
    }
  }
}

/** The model's view of a grep: one section per workspace root when there are several. */
export function grepText(success: tools.GrepSuccess): string {
  const sections = Object.entries(success.workspaceResults);
  if (sections.length === 0 && success.activeEditorResult !== undefined) sections.push(["", success.activeEditorResult]);
  const texts = sections.map(([root, union]) => {
    const body = unionText(union);
    return sections.length > 1 && root !== "" ? `Workspace ${root}:\n${body}` : body;
  });
  return texts.length === 0 ? "No matches found." : texts.join("\n\n");
}

function unionText(union: tools.GrepUnionResult): string {
  const r = union.result;
  switch (r.case) {
    case "files": {
      const f = r.value;
      if (f.files.length === 0) return "No files found.";
      return [...f.files, ...truncationNote(f.clientTruncated || f.ripgrepTruncated, f.totalFiles, f.files.length, "files")].join("\n");
    }
    case "count": {
      const c = r.value;
      if (c.counts.length === 0) return "No matches found.";
      const lines = c.counts.map((fc) => `${fc.file}:${fc.count}`);
      lines.push(`Total: ${c.totalMatches} matches in ${c.totalFiles} files.`);
      return [...lines, ...truncationNote(c.clientTruncated || c.ripgrepTruncated, c.totalFiles, c.counts.length, "files")].join("\n");
    }
    case "content": {
      const c = r.value;
      if (c.matches.length === 0) return "No matches found.";
      const lines: string[] = [];
      for (const file of c.matches) {
        if (lines.length > 0) lines.push("");
        lines.push(file.file);
        for (const m of file.matches) lines.push(`${m.lineNumber}${m.isContextLine ? "-" : ":"}${m.content}${m.contentTruncated ? " [line truncated]" : ""}`);
      }
      return [...lines, ...truncationNote(c.clientTruncated || c.ripgrepTruncated, c.totalMatchedLines, undefined, "matching lines")].join("\n");
    }
    case undefined:
      return "No matches found.";
    default: {
      const unreachable: never = r;
      throw new Error(`unknown grep union ${String(unreachable)}`);
    }
  }
}

function truncationNote(truncated: boolean, total: number, shown: number | undefined, what: string): string[] {
  if (!truncated) return [];
  const count = shown === undefined ? `${total} ${what} in total` : `showing ${shown} of ${total} ${what}`;
  return [`[Results truncated (${count}); narrow the search or page with head_limit and offset.]`];
}

// ---- Glob ----

export function planGlob(call: ToolCallInput, args: ToolArgs, ctx: ToolPlanContext): ToolPlan {
  const reader = new ArgReader("Glob", args);
  const globPattern = reader.requiredString("glob_pattern");
  const targetDirectory = reader.optionalString("target_directory");
  const globArgs = create(tools.GlobToolArgsSchema, { globPattern, ...(targetDirectory === undefined ? {} : { targetDirectory }) });
  const failed = (error: string) =>
    toolOutcome(call.callId, globVariant(globArgs, create(tools.GlobToolResultSchema, { result: { case: "error", value: { error } } })), ctx, error, true);
  const error = reader.error();
  if (error !== undefined) return { kind: "invalid", error, started: startedCard(call.callId, globVariant(globArgs), ctx), outcome: failed(error) };
  const grepArgs = create(tools.GrepArgsSchema, {
    pattern: "",
    glob: globPattern,
    outputMode: "files_with_matches",
    toolCallId: call.callId,
    ...(targetDirectory === undefined ? {} : { path: targetDirectory }),
  });
  return singleStepPlan(
    call.callId,
    ctx,
    (result?: tools.GlobToolResult) => globVariant(globArgs, result),
    { case: "grepArgs", value: grepArgs },
    "grepResult",
    (reply) => globOutcomeParts(reply, globPattern, targetDirectory ?? ""),
    failed,
  );
}

function globVariant(args: tools.GlobToolArgs, result?: tools.GlobToolResult): ToolVariant {
  return { case: "globToolCall", value: create(tools.GlobToolCallSchema, { args, ...(result === undefined ? {} : { result }) }) };
}

function globOutcomeParts(reply: tools.GrepResult, pattern: string, directory: string): OutcomeParts<tools.GlobToolResult> {
  const r = reply.result;
  const fail = (error: string): OutcomeParts<tools.GlobToolResult> => ({
    result: create(tools.GlobToolResultSchema, { result: { case: "error", value: { error } } }),
    content: error,
    isError: true,
    effects: [],
  });
  switch (r.case) {
    case "success": {
      const files: string[] = [];
      let total = 0;
      let clientTruncated = false;
      let ripgrepTruncated = false;
      const unions = [...Object.values(r.value.workspaceResults)];
      if (unions.length === 0 && r.value.activeEditorResult !== undefined) unions.push(r.value.activeEditorResult);
      for (const union of unions) {
        if (union.result.case !== "files") continue;
        const f = union.result.value;
        files.push(...f.files);
        total += Math.max(f.totalFiles, f.files.length);
        clientTruncated ||= f.clientTruncated;
        ripgrepTruncated ||= f.ripgrepTruncated;
      }
      const result = create(tools.GlobToolResultSchema, {
        result: { case: "success", value: { pattern, path: directory, files, totalFiles: total, clientTruncated, ripgrepTruncated } },
      });
      const lines = files.length === 0 ? [`No files found matching ${pattern}.`] : files;
      const note = truncationNote(clientTruncated || ripgrepTruncated, total, files.length, "files");
      return { result, content: clipMiddle([...lines, ...note].join("\n"), MAX_MODEL_CHARS), isError: false, effects: [] };
    }
    case "error":
      return fail(`Glob failed: ${r.value.error}`);
    case undefined:
      return fail("Glob returned no result.");
    default: {
      const unreachable: never = r;
      throw new Error(`unknown grep result ${String(unreachable)}`);
    }
  }
}

function definedOnly<T extends Record<string, unknown>>(values: T): Partial<T> {
  return Object.fromEntries(Object.entries(values).filter(([, v]) => v !== undefined)) as Partial<T>;
}
