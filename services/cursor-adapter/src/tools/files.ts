/**
 * Read and Delete: one exec each. A successful Read also adds its path to the
 * conversation's read_paths.
 */
import { create } from "@bufbuild/protobuf";
import { tools } from "@byok/cursor-protocol";
import { startedCard, toolOutcome } from "./cards.ts";
import { singleStepPlan, type OutcomeParts } from "./single-step.ts";
import { ArgReader, type ToolArgs } from "./tool-args.ts";
import type { ToolCallInput, ToolEffect, ToolPlan, ToolPlanContext, ToolVariant } from "./types.ts";

const UINT32_MAX = 0xffff_ffff;

// ---- Read ----

export function planRead(call: ToolCallInput, args: ToolArgs, ctx: ToolPlanContext): ToolPlan {
  const reader = new ArgReader("Read", args);
  const path = reader.requiredString("path");
  const offset = reader.optionalInteger("offset");
  const limit = reader.optionalInteger("limit", { min: 1, max: UINT32_MAX });
  const toolArgs = create(tools.ReadToolArgsSchema, {
    path,
    ...(offset === undefined ? {} : { offset }),
    ...(limit === undefined ? {} : { limit: Math.min(limit, 0x7fff_ffff) }),
  });
  const error = reader.error();
  if (error !== undefined) {
    return {
      kind: "invalid",
      error,
      started: startedCard(call.callId, readVariant(toolArgs), ctx),
      outcome: toolOutcome(call.callId, readVariant(toolArgs, readError(error)), ctx, error, true),
    };
  }
  const readArgs = create(tools.ReadArgsSchema, {
    path,
    toolCallId: call.callId,
    ...(offset === undefined ? {} : { offset }),
    ...(limit === undefined ? {} : { limit }),
  });
  return singleStepPlan(
    call.callId,
    ctx,
    (result?: tools.ReadToolResult) => readVariant(toolArgs, result),
    { case: "readArgs", value: readArgs },
    "readResult",
    (reply) => readOutcomeParts(reply, path),
    (message) => toolOutcome(call.callId, readVariant(toolArgs, readError(message)), ctx, message, true),
  );
}

function readVariant(args: tools.ReadToolArgs, result?: tools.ReadToolResult): ToolVariant {
  return { case: "readToolCall", value: create(tools.ReadToolCallSchema, { args, ...(result === undefined ? {} : { result }) }) };
}

function readError(errorMessage: string): tools.ReadToolResult {
  return create(tools.ReadToolResultSchema, { result: { case: "error", value: { errorMessage } } });
}

function readOutcomeParts(reply: tools.ReadResult, requestedPath: string): OutcomeParts<tools.ReadToolResult> {
  const r = reply.result;
  const fail = (content: string): OutcomeParts<tools.ReadToolResult> => ({ result: readError(content), content, isError: true, effects: [] });
  switch (r.case) {
    case "success": {
      const s = r.value;
      const path = s.path || requestedPath;
      const fileSize = Number(s.fileSize < 0n ? 0n : s.fileSize > BigInt(UINT32_MAX) ? BigInt(UINT32_MAX) : s.fileSize);
      const common = { isEmpty: false, exceededLimit: s.truncated, totalLines: Math.max(0, s.totalLines), fileSize, path };
      const effects: ToolEffect[] = [{ kind: "read_path", path }];
      if (s.output.case === "data") {
        const result = create(tools.ReadToolResultSchema, {
          result: { case: "success", value: { ...common, isEmpty: s.output.value.length === 0, output: { case: "data", value: s.output.value } } },
        });
        return { result, content: `Read binary file ${path} (${s.output.value.length} bytes); its content cannot be shown as text.`, isError: false, effects };
      }
      const text = s.output.case === "content" ? s.output.value : "";
      const result = create(tools.ReadToolResultSchema, {
        result: { case: "success", value: { ...common, isEmpty: text === "", output: { case: "content", value: text } } },
      });
      let content = text === "" ? "File is empty." : text;
      if (s.truncated) content += `\n\n[Output truncated: the file has ${s.totalLines} lines; use offset and limit to read the rest.]`;
      return { result, content, isError: false, effects };
    }
    case "error":
      return fail(`Error reading ${r.value.path || requestedPath}: ${r.value.error}`);
    case "rejected":
      return fail(`The user rejected reading ${r.value.path || requestedPath}${reasonSuffix(r.value.reason)}`);
    case "fileNotFound":
      return fail(`File not found: ${r.value.path || requestedPath}`);
    case "permissionDenied":
      return fail(`Permission denied: ${r.value.path || requestedPath}`);
    case "invalidFile":
      return fail(`Cannot read ${r.value.path || requestedPath}${reasonSuffix(r.value.reason)}`);
    case undefined:
      return fail(`Reading ${requestedPath} returned no result.`);
    default: {
      const unreachable: never = r;
      throw new Error(`unknown read result ${String(unreachable)}`);
    }
  }
}

// ---- Delete ----

export function planDelete(call: ToolCallInput, args: ToolArgs, ctx: ToolPlanContext): ToolPlan {
  const reader = new ArgReader("Delete", args);
  const path = reader.requiredString("path");
  const deleteArgs = create(tools.DeleteArgsSchema, { path, toolCallId: call.callId });
  const failed = (error: string) =>
    toolOutcome(
      call.callId,
      deleteVariant(deleteArgs, create(tools.DeleteResultSchema, { result: { case: "error", value: { path, error } } })),
      ctx,
      error,
      true,
    );
  const error = reader.error();
  if (error !== undefined) {
    return { kind: "invalid", error, started: startedCard(call.callId, deleteVariant(deleteArgs), ctx), outcome: failed(error) };
  }
  return singleStepPlan(
    call.callId,
    ctx,
    (result?: tools.DeleteResult) => deleteVariant(deleteArgs, result),
    { case: "deleteArgs", value: deleteArgs },
    "deleteResult",
    (reply) => deleteOutcomeParts(reply, path),
    failed,
  );
}

function deleteVariant(args: tools.DeleteArgs, result?: tools.DeleteResult): ToolVariant {
  return { case: "deleteToolCall", value: create(tools.DeleteToolCallSchema, { args, ...(result === undefined ? {} : { result }) }) };
}

function deleteOutcomeParts(reply: tools.DeleteResult, path: string): OutcomeParts<tools.DeleteResult> {
  const r = reply.result;
  const parts = (content: string, isError: boolean): OutcomeParts<tools.DeleteResult> => ({ result: reply, content, isError, effects: [] });
  switch (r.case) {
    case "success":
      return parts(`Deleted ${r.value.path || path}.`, false);
    case "fileNotFound":
      return parts(`File not found: ${r.value.path || path}`, true);
    case "notFile":
      return parts(`${r.value.path || path} is not a file${r.value.actualType === "" ? "" : ` (it is a ${r.value.actualType})`}.`, true);
    case "permissionDenied":
      return parts(`Permission denied deleting ${r.value.path || path}${reasonSuffix(r.value.clientVisibleError)}`, true);
    case "fileBusy":
      return parts(`${r.value.path || path} is busy and cannot be deleted.`, true);
    case "rejected":
      return parts(`The user rejected deleting ${r.value.path || path}${reasonSuffix(r.value.reason)}`, true);
    case "error":
      return parts(`Error deleting ${r.value.path || path}: ${r.value.error}`, true);
    case undefined:
      return parts(`Deleting ${path} returned no result.`, true);
    default: {
      const unreachable: never = r;
      throw new Error(`unknown delete result ${String(unreachable)}`);
    }
  }
}

// ---- shared ----

/** read_paths after a tool: the new path appended once, order kept. */
export function withReadPaths(readPaths: readonly string[], effects: readonly ToolEffect[]): string[] {
  const next = [...readPaths];
  for (const effect of effects) {
    if (effect.kind === "read_path" && effect.path !== "" && !next.includes(effect.path)) next.push(effect.path);
  }
  return next;
}

function reasonSuffix(reason: string): string {
  return reason === "" ? "." : `: ${reason}`;
}
