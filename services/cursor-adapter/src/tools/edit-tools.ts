/**
 * StrReplace and Write (and EditNotebook, edit-notebook.ts): two execs sharing
 * the call's tool_call_id: a hidden read of the current file, then a write of
 * the COMPLETE new content (never a snippet). The edit card gets before/after
 * content and the line diff.
 */
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { tools } from "@byok/cursor-protocol";
import { startedCard, toolOutcome } from "./cards.ts";
import { applyStrReplace, diffLines, normalizeNewlines } from "./edit-engine.ts";
import { ArgReader, type ToolArgs } from "./tool-args.ts";
import type { ExecCall, ExecProgress, ExecReply, ExecStep, ToolCallInput, ToolPlan, ToolPlanContext, ToolVariant } from "./types.ts";

type EditKind = "StrReplace" | "Write" | "EditNotebook";

/** The file as the hidden read saw it. */
export interface FileBefore {
  content: string;
  exists: boolean;
}

/** What to write given the file as read: the complete new content, or why not. */
export type EditDecision = { kind: "write"; after: string; summary: string } | { kind: "fail"; result: tools.EditResult; message: string };

export function planStrReplace(call: ToolCallInput, args: ToolArgs, ctx: ToolPlanContext): ToolPlan {
  const reader = new ArgReader("StrReplace", args);
  const path = reader.requiredString("path");
  const oldString = reader.requiredText("old_string");
  const newString = reader.requiredText("new_string");
  const replaceAll = reader.optionalBoolean("replace_all") ?? false;
  const editArgs = create(tools.EditArgsSchema, { path, streamContent: normalizeNewlines(newString) });
  const error = reader.error();
  if (error !== undefined) return editInvalid(call, ctx, editArgs, error);
  const decide = (before: FileBefore): EditDecision => {
    const replaced = applyStrReplace({ path, before: before.content, fileExists: before.exists, oldString, newString, replaceAll });
    if (replaced.kind === "error") {
      return {
        kind: "fail",
        message: replaced.message,
        result: replaced.fileNotFound
          ? editResult({ case: "fileNotFound", value: { path } })
          : editResult({ case: "error", value: { path, error: replaced.message, modelVisibleError: replaced.message } }),
      };
    }
    const count = replaced.replacements === 1 ? "1 replacement" : `${replaced.replacements} replacements`;
    return { kind: "write", after: replaced.after, summary: `Edited ${path}: ${count}` };
  };
  return {
    kind: "exec",
    started: startedCard(call.callId, editVariant(editArgs), ctx),
    exec: new EditExec("StrReplace", call.callId, editArgs, decide, ctx),
  };
}

export function planWrite(call: ToolCallInput, args: ToolArgs, ctx: ToolPlanContext): ToolPlan {
  const reader = new ArgReader("Write", args);
  const path = reader.requiredString("path");
  const contents = normalizeNewlines(reader.requiredText("contents"));
  const editArgs = create(tools.EditArgsSchema, { path, streamContent: contents });
  const error = reader.error();
  if (error !== undefined) return editInvalid(call, ctx, editArgs, error);
  const decide = (before: FileBefore): EditDecision => ({
    kind: "write",
    after: contents,
    summary: before.exists ? `Wrote ${path}` : `Created ${path}`,
  });
  return {
    kind: "exec",
    started: startedCard(call.callId, editVariant(editArgs), ctx),
    exec: new EditExec("Write", call.callId, editArgs, decide, ctx),
  };
}

export function editVariant(args: tools.EditArgs, result?: tools.EditResult): ToolVariant {
  return { case: "editToolCall", value: create(tools.EditToolCallSchema, { args, ...(result === undefined ? {} : { result }) }) };
}

export function editResult(result: MessageInitShape<typeof tools.EditResultSchema>["result"]): tools.EditResult {
  return create(tools.EditResultSchema, { result });
}

export function editInvalid(call: ToolCallInput, ctx: ToolPlanContext, editArgs: tools.EditArgs, error: string): ToolPlan {
  const result = editResult({ case: "error", value: { path: editArgs.path, error, modelVisibleError: error } });
  return {
    kind: "invalid",
    error,
    started: startedCard(call.callId, editVariant(editArgs), ctx),
    outcome: toolOutcome(call.callId, editVariant(editArgs, result), ctx, error, true),
  };
}

export class EditExec implements ExecCall {
  readonly first: ExecStep;
  readonly #kind: EditKind;
  readonly #callId: string;
  readonly #args: tools.EditArgs;
  readonly #decide: (before: FileBefore) => EditDecision;
  readonly #ctx: ToolPlanContext;
  #stage: "read" | "write" = "read";
  #before = "";
  #after = "";
  #summary = "";

  constructor(kind: EditKind, callId: string, args: tools.EditArgs, decide: (before: FileBefore) => EditDecision, ctx: ToolPlanContext) {
    this.#kind = kind;
    this.#callId = callId;
    this.#args = args;
    this.#decide = decide;
    this.#ctx = ctx;
    this.first = { request: { case: "readArgs", value: create(tools.ReadArgsSchema, { path: args.path, toolCallId: callId }) }, delayMs: 0 };
  }

  onReply(reply: ExecReply): ExecProgress {
    if (reply.case === undefined) return { kind: "waiting" };
    if (this.#stage === "read") {
      if (reply.case !== "readResult") return { kind: "protocol_error", message: `${this.#kind} read answered with ${reply.case}` };
      return this.#onRead(reply.value);
    }
    if (reply.case !== "writeResult") return { kind: "protocol_error", message: `${this.#kind} write answered with ${reply.case}` };
    return this.#onWrite(reply.value);
  }

  onThrow(error: string): ExecProgress {
    const what = this.#stage === "read" ? "reading" : "writing";
    return this.#fail(this.#error(`Error ${what} ${this.#args.path}: ${error}`));
  }

  onClosedWithoutResult(): ExecProgress {
    return this.#fail(this.#error(`The client closed the ${this.#stage} of ${this.#args.path} before sending a result.`));
  }

  #onRead(read: tools.ReadResult): ExecProgress {
    const path = this.#args.path;
    const r = read.result;
    const overwriting = this.#kind === "Write";
    let before: FileBefore;
    switch (r.case) {
      case "success":
        if (r.value.output.case === "content" && !(r.value.truncated && !overwriting)) {
          before = { content: normalizeNewlines(r.value.output.value), exists: true };
        } else if (overwriting) {
          before = { content: "", exists: true };
        } else {
          const why = r.value.truncated ? "is too large to edit in place" : "is not a text file";
          return this.#fail(this.#error(`${path} ${why}; use Write to replace it.`));
        }
        break;
      case "fileNotFound":
        before = { content: "", exists: false };
        break;
      case "permissionDenied":
        return this.#fail({ result: editResult({ case: "readPermissionDenied", value: { path } }), message: `Permission denied reading ${path}.` });
      case "rejected":
        return this.#fail({
          result: editResult({ case: "rejected", value: { path, reason: r.value.reason } }),
          message: `The user rejected the edit of ${path}${r.value.reason === "" ? "." : `: ${r.value.reason}`}`,
        });
      case "invalidFile":
        if (!overwriting) return this.#fail(this.#error(`Cannot edit ${path}: ${r.value.reason}`));
        before = { content: "", exists: true };
        break;
      case "error":
        return this.#fail(this.#error(`Error reading ${path}: ${r.value.error}`));
      case undefined:
        return this.#fail(this.#error(`Reading ${path} returned no result.`));
      default: {
        const unreachable: never = r;
        return { kind: "protocol_error", message: `unknown read result ${String(unreachable)}` };
      }
    }
    const decision = this.#decide(before);
    if (decision.kind === "fail") return this.#fail(decision);
    this.#stage = "write";
    this.#before = before.content;
    this.#after = decision.after;
    this.#summary = decision.summary;
    const write = create(tools.WriteArgsSchema, { path, fileText: decision.after, toolCallId: this.#callId });
    return { kind: "next", step: { request: { case: "writeArgs", value: write }, delayMs: 0 } };
  }

  #onWrite(write: tools.WriteResult): ExecProgress {
    const path = this.#args.path;
    const r = write.result;
    switch (r.case) {
      case "success": {
        const diff = diffLines(path, this.#before, this.#after);
        const result = editResult({
          case: "success",
          value: {
            path: r.value.path || path,
            linesAdded: diff.linesAdded,
            linesRemoved: diff.linesRemoved,
            diffString: diff.diff,
            beforeFullFileContent: this.#before,
            afterFullFileContent: this.#after,
          },
        });
        const content = `${this.#summary} (+${diff.linesAdded} -${diff.linesRemoved} lines).`;
        return { kind: "done", outcome: toolOutcome(this.#callId, editVariant(this.#args, result), this.#ctx, content, false) };
      }
      case "permissionDenied":
        return this.#fail({
          result: editResult({ case: "writePermissionDenied", value: { path, error: r.value.error, isReadonly: r.value.isReadonly } }),
          message: `Permission denied writing ${path}${r.value.error === "" ? "." : `: ${r.value.error}`}`,
        });
      case "noSpace":
        return this.#fail(this.#error(`No space left on the device to write ${path}.`));
      case "error":
        return this.#fail(this.#error(`Error writing ${path}: ${r.value.error}`));
      case "rejected":
        return this.#fail({
          result: editResult({ case: "rejected", value: { path, reason: r.value.reason } }),
          message: `The user rejected the edit of ${path}${r.value.reason === "" ? "." : `: ${r.value.reason}`}`,
        });
      case undefined:
        return this.#fail(this.#error(`Writing ${path} returned no result.`));
      default: {
        const unreachable: never = r;
        return { kind: "protocol_error", message: `unknown write result ${String(unreachable)}` };
      }
    }
  }

  #error(message: string): { result: tools.EditResult; message: string } {
    return { result: editResult({ case: "error", value: { path: this.#args.path, error: message, modelVisibleError: message } }), message };
  }

  #fail(failure: { result: tools.EditResult; message: string }): ExecProgress {
    return {
      kind: "done",
      outcome: toolOutcome(this.#callId, editVariant(this.#args, failure.result), this.#ctx, failure.message, true),
    };
  }
}
