/**
 * Shell: one streaming exec (shell_stream_args -> shell_stream events).
 * stdout/stderr become tool_call_delta updates while the command runs; exit,
 * backgrounded, rejected, ... finish the call with a typed ShellResult.
 */
import { create } from "@bufbuild/protobuf";
import { tools } from "@byok/cursor-protocol";
import { startedCard, toolOutcome } from "./cards.ts";
import { ArgReader, clipMiddle, type ToolArgs } from "./tool-args.ts";
import type { ExecCall, ExecProgress, ExecReply, ExecStep, ToolCallInput, ToolPlan, ToolPlanContext, ToolVariant } from "./types.ts";

export const SHELL_DEFAULT_BLOCK_MS = 30_000;
export const SHELL_MAX_BLOCK_MS = 60_000;
const HARD_TIMEOUT_MS = 86_400_000;
const FILE_OUTPUT_THRESHOLD_BYTES = 40_000n;
/** Longest command output the model sees (head + tail kept). */
const MAX_MODEL_OUTPUT_CHARS = 40_000;

export function planShell(call: ToolCallInput, args: ToolArgs, ctx: ToolPlanContext): ToolPlan {
  const reader = new ArgReader("Shell", args);
  const command = reader.requiredString("command");
  const blockMs = reader.optionalInteger("block_until_ms", { min: 0 }) ?? SHELL_DEFAULT_BLOCK_MS;
  const workingDirectory = reader.optionalString("working_directory") ?? "";
  const description = reader.optionalString("description");
  const permissions = reader.optionalStringArray("required_permissions") ?? [];
  for (const p of permissions) if (p !== "full_network" && p !== "all") reader.problem(`unknown permission "${p}"`);
  const error = reader.error();
  if (error !== undefined) return shellInvalid(call, ctx, command, error);

  const timeout = Math.min(blockMs, SHELL_MAX_BLOCK_MS);
  const shellArgs = create(tools.ShellArgsSchema, {
    command,
    workingDirectory,
    timeout,
    toolCallId: call.callId,
    fileOutputThresholdBytes: FILE_OUTPUT_THRESHOLD_BYTES,
    isBackground: timeout === 0,
    timeoutBehavior: tools.TimeoutBehavior.BACKGROUND,
    hardTimeout: HARD_TIMEOUT_MS,
    closeStdin: true,
    conversationId: ctx.conversationId,
    ...(description === undefined ? {} : { description }),
    ...sandboxPolicyFor(permissions),
  });
  return {
    kind: "exec",
    started: startedCard(call.callId, shellVariant(shellArgs), ctx),
    exec: new ShellExec(call.callId, shellArgs, ctx),
  };
}

function sandboxPolicyFor(permissions: string[]): { requestedSandboxPolicy?: tools.SandboxPolicy } {
  if (permissions.includes("all")) {
    return { requestedSandboxPolicy: create(tools.SandboxPolicySchema, { type: tools.SandboxPolicy_Type.INSECURE_NONE, networkAccess: true }) };
  }
  if (permissions.includes("full_network")) {
    return {
      requestedSandboxPolicy: create(tools.SandboxPolicySchema, { type: tools.SandboxPolicy_Type.WORKSPACE_READWRITE, networkAccess: true }),
    };
  }
  return {};
}

function shellVariant(args: tools.ShellArgs, result?: tools.ShellResult): ToolVariant {
  return {
    case: "shellToolCall",
    value: create(tools.ShellToolCallSchema, {
      args,
      ...(result === undefined ? {} : { result }),
      ...(args.description === undefined ? {} : { description: args.description }),
    }),
  };
}

function shellInvalid(call: ToolCallInput, ctx: ToolPlanContext, command: string, error: string): ToolPlan {
  const args = create(tools.ShellArgsSchema, { command, toolCallId: call.callId });
  const result = create(tools.ShellResultSchema, { result: { case: "spawnError", value: { command, error } } });
  return {
    kind: "invalid",
    error,
    started: startedCard(call.callId, shellVariant(args), ctx),
    outcome: toolOutcome(call.callId, shellVariant(args, result), ctx, error, true),
  };
}

class ShellExec implements ExecCall {
  readonly first: ExecStep;
  readonly #callId: string;
  readonly #args: tools.ShellArgs;
  readonly #ctx: ToolPlanContext;
  #stdout = "";
  #stderr = "";
  #interleaved = "";

  constructor(callId: string, args: tools.ShellArgs, ctx: ToolPlanContext) {
    this.#callId = callId;
    this.#args = args;
    this.#ctx = ctx;
    this.first = { request: { case: "shellStreamArgs", value: args }, delayMs: 0 };
  }

  onReply(reply: ExecReply): ExecProgress {
    switch (reply.case) {
      case "shellStream":
        return this.#onStream(reply.value);
      case "shellResult":
        return this.#finish(reply.value);
      case undefined:
        return { kind: "waiting" };
      default:
        return { kind: "protocol_error", message: `Shell exec answered with ${reply.case}` };
    }
  }

  onThrow(error: string): ExecProgress {
    return this.#spawnError(`The shell failed to run the command: ${error}`, error);
  }

  onClosedWithoutResult(): ExecProgress {
    const message = "The shell stream closed before the command finished.";
    return this.#spawnError(message, message);
  }

  #onStream(stream: tools.ShellStream): ExecProgress {
    const event = stream.event;
    switch (event.case) {
      case "stdout":
        this.#stdout += event.value.data;
        this.#interleaved += event.value.data;
        return { kind: "waiting", delta: outputDelta("stdout", event.value.data) };
      case "stderr":
        this.#stderr += event.value.data;
        this.#interleaved += event.value.data;
        return { kind: "waiting", delta: outputDelta("stderr", event.value.data) };
      case "start":
      case "hookContext":
      case undefined:
        return { kind: "waiting" };
      case "exit":
        return this.#onExit(event.value);
      case "backgrounded":
        return this.#onBackgrounded(event.value);
      case "rejected":
        return this.#finish(create(tools.ShellResultSchema, { result: { case: "rejected", value: event.value } }));
      case "permissionDenied":
        return this.#finish(create(tools.ShellResultSchema, { result: { case: "permissionDenied", value: event.value } }));
      case "sandboxUnsupported": {
        const reason = event.value.reason || `sandbox ${event.value.sandboxPolicyType} is not supported`;
        return this.#spawnError(`The command could not run: ${reason}`, reason);
      }
      default: {
        const unreachable: never = event;
        return { kind: "protocol_error", message: `unknown shell event ${String(unreachable)}` };
      }
    }
  }

  #common() {
    return {
      command: this.#args.command,
      workingDirectory: this.#args.workingDirectory,
      stdout: this.#stdout,
      stderr: this.#stderr,
      interleavedOutput: this.#interleaved,
      executionTime: Math.max(0, Math.trunc(this.#ctx.now() - this.#ctx.startedAtMs)),
    };
  }

  #onExit(exit: tools.ShellStreamExit): ExecProgress {
    const base = {
      ...this.#common(),
      exitCode: exit.code,
      ...(exit.outputLocation === undefined ? {} : { outputLocation: exit.outputLocation }),
      ...(exit.localExecutionTimeMs === undefined ? {} : { localExecutionTimeMs: exit.localExecutionTimeMs }),
    };
    const result =
      exit.code === 0 && !exit.aborted
        ? create(tools.ShellResultSchema, { result: { case: "success", value: base } })
        : create(tools.ShellResultSchema, {
            result: {
              case: "failure",
              value: { ...base, aborted: exit.aborted, ...(exit.abortReason === undefined ? {} : { abortReason: exit.abortReason }) },
            },
          });
    return this.#finish(result);
  }

  #onBackgrounded(bg: tools.ShellStreamBackgrounded): ExecProgress {
    const result = create(tools.ShellResultSchema, {
      isBackground: true,
      terminalsFolder: this.#ctx.terminalsFolder,
      ...(bg.pid === undefined ? {} : { pid: bg.pid }),
      result: {
        case: "success",
        value: {
          ...this.#common(),
          shellId: bg.shellId,
          ...(bg.pid === undefined ? {} : { pid: bg.pid }),
          ...(bg.msToWait === undefined ? {} : { msToWait: bg.msToWait }),
          ...(bg.reason === undefined ? {} : { backgroundReason: bg.reason }),
        },
      },
    });
    return this.#finish(result);
  }

  #spawnError(content: string, error: string): ExecProgress {
    const result = create(tools.ShellResultSchema, {
      result: { case: "spawnError", value: { command: this.#args.command, workingDirectory: this.#args.workingDirectory, error } },
    });
    return { kind: "done", outcome: toolOutcome(this.#callId, shellVariant(this.#args, result), this.#ctx, content, true) };
  }

  #finish(result: tools.ShellResult): ExecProgress {
    const { content, isError } = shellResultText(result, this.#ctx.terminalsFolder);
    return { kind: "done", outcome: toolOutcome(this.#callId, shellVariant(this.#args, result), this.#ctx, content, isError) };
  }
}

function outputDelta(stream: "stdout" | "stderr", content: string): tools.ToolCallDelta {
  return create(tools.ToolCallDeltaSchema, {
    delta: { case: "shellToolCallDelta", value: { delta: { case: stream, value: { content } } } },
  });
}

/** What the model sees for a finished shell call. A non-zero exit code is a normal result, not a tool error. */
export function shellResultText(result: tools.ShellResult, terminalsFolder: string): { content: string; isError: boolean } {
  const r = result.result;
  switch (r.case) {
    case "success": {
      const s = r.value;
      if (result.isBackground === true || s.shellId !== undefined) {
        const id = s.shellId ?? 0;
        const file = terminalFilePath(terminalsFolder, String(id));
        const lines = [
          `The command is still running in the background (shell_id ${id}${s.pid === undefined ? "" : `, pid ${s.pid}`}).`,
          `Its output is written to ${file}. Use AwaitShell with shell_id "${id}" to wait for it, or Read that file to see the output so far.`,
        ];
        const output = s.interleavedOutput ?? s.stdout + s.stderr;
        if (output !== "") lines.push("", "Output so far:", clipMiddle(output, MAX_MODEL_OUTPUT_CHARS));
        return { content: lines.join("\n"), isError: false };
      }
      return { content: exitText(s.exitCode, s.interleavedOutput ?? s.stdout + s.stderr, s.outputLocation, undefined), isError: false };
    }
    case "failure": {
      const f = r.value;
      const aborted = f.aborted ? abortText(f.abortReason) : undefined;
      return { content: exitText(f.exitCode, f.interleavedOutput ?? f.stdout + f.stderr, f.outputLocation, aborted), isError: false };
    }
    case "timeout":
      return { content: `The command timed out after ${r.value.timeoutMs} ms.`, isError: true };
    case "rejected":
      return { content: `The user rejected the command${r.value.reason === "" ? "." : `: ${r.value.reason}`}`, isError: true };
    case "spawnError":
      return { content: `The command could not be started: ${r.value.error}`, isError: true };
    case "permissionDenied":
      return { content: `Permission denied: ${r.value.error}`, isError: true };
    case undefined:
      return { content: "The shell returned no result.", isError: true };
    default: {
      const unreachable: never = r;
      throw new Error(`unknown shell result ${String(unreachable)}`);
    }
  }
}

function exitText(code: number, output: string, location: tools.OutputLocation | undefined, aborted: string | undefined): string {
  const lines = [`Exit code: ${code}`];
  if (aborted !== undefined) lines.push(aborted);
  lines.push("", output === "" ? "(no output)" : clipMiddle(output, MAX_MODEL_OUTPUT_CHARS));
  if (location !== undefined && location.filePath !== "") {
    lines.push("", `Full output: ${location.filePath} (${location.lineCount} lines, ${location.sizeBytes} bytes).`);
  }
  return lines.join("\n");
}

function abortText(reason: tools.ShellAbortReason | undefined): string {
  switch (reason) {
    case tools.ShellAbortReason.USER_ABORT:
      return "The user aborted the command.";
    case tools.ShellAbortReason.TIMEOUT:
      return "The command was aborted because it ran too long.";
    default:
      return "The command was aborted.";
  }
}

/** `<terminals_folder>/<shell_id>.txt`. */
export function terminalFilePath(terminalsFolder: string, shellId: string): string {
  return `${terminalsFolder.replace(/[/\\]+$/, "")}/${shellId}.txt`;
}
