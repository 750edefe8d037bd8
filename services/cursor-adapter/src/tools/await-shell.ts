/**
 * AwaitShell: wait for a backgrounded shell by polling its terminal file
 * (`<terminals_folder>/<shell_id>.txt`) with read_args until the command has
 * exited, the output matches `pattern`, or the wait budget is spent. Without a
 * shell id it is a plain server-side pause.
 *
 * Terminal files start with a `---` header block (pid, cwd, command,
 * running_for_ms, ...) and get a `---` footer block with `exit_code` /
 * `ended_at` when the command ends.
 */
import { create } from "@bufbuild/protobuf";
import { tools } from "@byok/cursor-protocol";
import { startedCard, toolOutcome } from "./cards.ts";
import { terminalFilePath } from "./shell.ts";
import { ArgReader, type ToolArgs } from "./tool-args.ts";
import type { ExecCall, ExecProgress, ExecReply, ExecStep, ToolCallInput, ToolPlan, ToolPlanContext, ToolVariant } from "./types.ts";

const DEFAULT_WAIT_MS = 30_000;
const MAX_WAIT_MS = 60_000;
export const AWAIT_POLL_INTERVAL_MS = 1_000;
const MAX_TAIL_CHARS = 8_000;

export function planAwaitShell(call: ToolCallInput, args: ToolArgs, ctx: ToolPlanContext): ToolPlan {
  const reader = new ArgReader("AwaitShell", args);
  const shellId = reader.optionalString("shell_id")?.trim();
  const waitMs = Math.min(reader.optionalInteger("block_until_ms", { min: 0 }) ?? DEFAULT_WAIT_MS, MAX_WAIT_MS);
  const pattern = reader.optionalRegex("pattern");
  if (shellId === undefined && waitMs === 0) reader.problem(`without "shell_id", "block_until_ms" must be between 1 and ${MAX_WAIT_MS}`);
  if (shellId !== undefined && ctx.terminalsFolder === "") reader.problem("the client did not report a terminals folder, so shells cannot be awaited");
  const awaitArgs = create(tools.AwaitArgsSchema, {
    taskId: shellId ?? "",
    blockUntilMs: waitMs,
    ...(pattern === undefined ? {} : { regex: pattern.source }),
  });
  const error = reader.error();
  if (error !== undefined) {
    const result = create(tools.AwaitResultSchema, { result: { case: "error", value: { error } } });
    return {
      kind: "invalid",
      error,
      started: startedCard(call.callId, awaitVariant(awaitArgs), ctx),
      outcome: toolOutcome(call.callId, awaitVariant(awaitArgs, result), ctx, error, true),
    };
  }
  const started = startedCard(call.callId, awaitVariant(awaitArgs), ctx);
  if (shellId === undefined) {
    return {
      kind: "server",
      started,
      delayMs: waitMs,
      complete: () => {
        const result = create(tools.AwaitResultSchema, {
          result: {
            case: "success",
            value: { awaitResult: { case: "stillRunning", value: { runtimeMs: BigInt(waitMs), wakeReason: "sleep_complete" } } },
          },
        });
        return toolOutcome(call.callId, awaitVariant(awaitArgs, result), ctx, `Waited ${waitMs} ms.`, false);
      },
    };
  }
  const file = terminalFilePath(ctx.terminalsFolder, shellId);
  return { kind: "exec", started, exec: new AwaitShellExec(call.callId, awaitArgs, file, waitMs, pattern?.regex, ctx) };
}

function awaitVariant(args: tools.AwaitArgs, result?: tools.AwaitResult): ToolVariant {
  return { case: "awaitToolCall", value: create(tools.AwaitToolCallSchema, { args, ...(result === undefined ? {} : { result }) }) };
}

class AwaitShellExec implements ExecCall {
  readonly first: ExecStep;
  readonly #callId: string;
  readonly #args: tools.AwaitArgs;
  readonly #file: string;
  readonly #deadline: number;
  readonly #pattern: RegExp | undefined;
  readonly #ctx: ToolPlanContext;

  constructor(callId: string, args: tools.AwaitArgs, file: string, waitMs: number, pattern: RegExp | undefined, ctx: ToolPlanContext) {
    this.#callId = callId;
    this.#args = args;
    this.#file = file;
    this.#deadline = ctx.startedAtMs + waitMs;
    this.#pattern = pattern;
    this.#ctx = ctx;
    this.first = this.#readStep(0);
  }

  onReply(reply: ExecReply): ExecProgress {
    if (reply.case === undefined) return { kind: "waiting" };
    if (reply.case !== "readResult") return { kind: "protocol_error", message: `AwaitShell read answered with ${reply.case}` };
    const r = reply.value.result;
    switch (r.case) {
      case "success":
        if (r.value.output.case !== "content") return this.#error(`${this.#file} is not a text file.`);
        return this.#onContent(r.value.output.value);
      case "fileNotFound":
        return this.#error(`No output file for shell ${this.#args.taskId} (${this.#file}); check the shell_id.`);
      case "error":
        return this.#error(`Could not read ${this.#file}: ${r.value.error}`);
      case "rejected":
        return this.#error(`Reading ${this.#file} was rejected${r.value.reason === "" ? "" : `: ${r.value.reason}`}`);
      case "permissionDenied":
        return this.#error(`Permission denied reading ${this.#file}.`);
      case "invalidFile":
        return this.#error(`Could not read ${this.#file}: ${r.value.reason}`);
      case undefined:
        return this.#error(`Reading ${this.#file} returned no result.`);
      default: {
        const unreachable: never = r;
        return { kind: "protocol_error", message: `unknown read result ${String(unreachable)}` };
      }
    }
  }

  onThrow(error: string): ExecProgress {
    return this.#error(`Could not read ${this.#file}: ${error}`);
  }

  onClosedWithoutResult(): ExecProgress {
    return this.#error(`Reading ${this.#file} ended without a result.`);
  }

  #readStep(delayMs: number): ExecStep {
    return { request: { case: "readArgs", value: create(tools.ReadArgsSchema, { path: this.#file, toolCallId: this.#callId }) }, delayMs };
  }

  #onContent(text: string): ExecProgress {
    const terminal = parseTerminalFile(text);
    const match = this.#pattern?.exec(terminal.body)?.[0];
    const base = {
      taskId: this.#args.taskId,
      runtimeMs: BigInt(Math.max(0, Math.trunc(terminal.elapsedMs ?? terminal.runningForMs ?? this.#ctx.now() - this.#ctx.startedAtMs))),
      outputFilePath: this.#file,
      outputLength: BigInt(terminal.body.length),
      regexRequested: this.#pattern !== undefined,
      ...(match === undefined ? {} : { regexMatch: match }),
    };
    if (terminal.finished) {
      const value = {
        ...base,
        ...(terminal.exitCode === undefined ? {} : { exitCode: terminal.exitCode }),
        wakeReason: "task_complete",
      };
      const exit = terminal.exitCode === undefined ? "" : ` with exit code ${terminal.exitCode}`;
      return this.#done({ case: "complete", value: create(tools.AwaitTaskCompleteSchema, value) }, `Shell ${this.#args.taskId} finished${exit}.`, terminal.body);
    }
    const now = this.#ctx.now();
    if (match === undefined && now + AWAIT_POLL_INTERVAL_MS <= this.#deadline) {
      return { kind: "next", step: this.#readStep(AWAIT_POLL_INTERVAL_MS) };
    }
    const wakeReason = match === undefined ? "timeout" : "pattern_match";
    const headline =
      match === undefined
        ? `Shell ${this.#args.taskId} is still running.`
        : `Shell ${this.#args.taskId} is still running; its output matched the pattern: ${JSON.stringify(match)}.`;
    return this.#done({ case: "stillRunning", value: create(tools.AwaitTaskStillRunningSchema, { ...base, wakeReason }) }, headline, terminal.body);
  }

  #done(awaitResult: tools.AwaitSuccess["awaitResult"], headline: string, body: string): ExecProgress {
    const result = create(tools.AwaitResultSchema, { result: { case: "success", value: { awaitResult } } });
    const lines = [headline, `Output file: ${this.#file} (${body.length} characters).`];
    if (body.trim() !== "") lines.push("", "Latest output:", clipTail(body, MAX_TAIL_CHARS));
    return { kind: "done", outcome: toolOutcome(this.#callId, awaitVariant(this.#args, result), this.#ctx, lines.join("\n"), false) };
  }

  #error(message: string): ExecProgress {
    const result = create(tools.AwaitResultSchema, { result: { case: "error", value: { error: message } } });
    return { kind: "done", outcome: toolOutcome(this.#callId, awaitVariant(this.#args, result), this.#ctx, message, true) };
  }
}

export interface TerminalFile {
  body: string;
  finished: boolean;
  exitCode?: number;
  runningForMs?: number;
  elapsedMs?: number;
}

/** Splits a terminal file into header, output body and (when the command ended) footer. */
export function parseTerminalFile(text: string): TerminalFile {
  const lines = text.replace(/\r\n?/g, "\n").split("\n");
  let start = 0;
  let header = new Map<string, string>();
  if (lines[0] === "---") {
    const close = lines.indexOf("---", 1);
    if (close > 0) {
      header = keyValues(lines.slice(1, close));
      start = close + 1;
    }
  }
  let end = lines.length;
  while (end > start && lines[end - 1] === "") end -= 1;
  let footer = new Map<string, string>();
  if (end - start >= 2 && lines[end - 1] === "---") {
    const open = lines.lastIndexOf("---", end - 2);
    if (open >= start) {
      const candidate = keyValues(lines.slice(open + 1, end - 1));
      if (candidate.has("exit_code") || candidate.has("ended_at") || candidate.has("error")) {
        footer = candidate;
        end = open;
      }
    }
  }
  const body = lines.slice(start, end).join("\n").replace(/\n+$/, "");
  const exitCode = integerOf(footer.get("exit_code"));
  const runningForMs = integerOf(header.get("running_for_ms"));
  const elapsedMs = integerOf(footer.get("elapsed_ms"));
  return {
    body,
    finished: footer.size > 0,
    ...(exitCode === undefined ? {} : { exitCode }),
    ...(runningForMs === undefined ? {} : { runningForMs }),
    ...(elapsedMs === undefined ? {} : { elapsedMs }),
  };
}

function keyValues(lines: string[]): Map<string, string> {
  const map = new Map<string, string>();
  for (const line of lines) {
    const m = /^([a-z_]+):\s?(.*)$/.exec(line);
    if (m !== null && m[1] !== undefined) map.set(m[1], (m[2] ?? "").trim());
  }
  return map;
}

function integerOf(text: string | undefined): number | undefined {
  if (text === undefined || !/^-?\d+$/.test(text)) return undefined;
  return Number(text);
}

function clipTail(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  return `[... ${text.length - maxChars} earlier characters omitted ...]\n${text.slice(text.length - maxChars)}`;
}

