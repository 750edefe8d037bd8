/**
 * run_command -> a terminal in the editor (terminal/create, wait_for_exit,
 * output, kill, release), behind a permission request. The command line runs
 * as `/bin/sh -c <command>` in the session's working directory (or `cwd`),
 * with the editor keeping at most COMMAND_OUTPUT_LIMIT bytes of output. The
 * editor shows the live terminal in the tool call; the model gets the exit
 * status and the output. A command still running at its timeout, or when the
 * prompt is cancelled, is killed.
 */
import { z } from "zod";
import type { TerminalExit } from "../acp/editor-client.ts";
import { askPermission, commandPermissionKey, refusal } from "./permissions.ts";
import { absolutePath, capped, errorMessage, failed, type ToolContext, type ToolOutcome } from "./tool-context.ts";

export const runCommandArgs = z.object({ command: z.string().min(1), cwd: z.string().min(1).optional(), timeout_ms: z.number().int().min(1).optional() });

export type RunCommandArgs = z.infer<typeof runCommandArgs>;

export async function runCommand(args: RunCommandArgs, ctx: ToolContext): Promise<ToolOutcome> {
  const cwd = absolutePath(ctx.cwd, args.cwd ?? ctx.cwd);
  const title = `\`${args.command.length > 80 ? `${args.command.slice(0, 77)}...` : args.command}\``;
  const program = commandPermissionKey(args.command).slice("execute:".length);
  ctx.show({ title, status: "pending" });
  const verdict = await askPermission(ctx.permissions, commandPermissionKey(args.command), `\`${program}\` commands in this session`, {
    toolCallId: ctx.callId,
    title,
    kind: "execute",
    status: "pending",
    rawInput: { command: args.command, cwd },
  });
  const refused = refusal(verdict, {
    rejected: "The user rejected this command; it did not run. Do not run it again unchanged; ask or take another approach.",
    cancelled: "The command did not run: the user cancelled.",
  });
  if (refused !== undefined) return failed(refused);
  const { editor, sessionId, limits } = ctx;
  let terminalId: string;
  try {
    ({ terminalId } = await editor.createTerminal(sessionId, { command: "/bin/sh", args: ["-c", args.command], cwd, outputByteLimit: limits.commandOutputLimit }));
  } catch (error) {
    return failed(`The command could not start: ${errorMessage(error)}`);
  }
  const terminal = [{ type: "terminal" as const, terminalId }];
  ctx.show({ status: "in_progress", content: terminal });
  const timeoutMs = Math.min(args.timeout_ms ?? limits.commandTimeoutMs, limits.commandMaxTimeoutMs);
  const stop = new AbortController();
  const timer = setTimeout(() => stop.abort(new Error("timeout")), timeoutMs);
  const onCancel = () => stop.abort(new Error("cancelled"));
  ctx.signal.addEventListener("abort", onCancel, { once: true });
  let exit: TerminalExit | undefined;
  let ended: "exited" | "timeout" | "cancelled" | "lost" = "exited";
  try {
    exit = await editor.waitForExit(sessionId, terminalId, stop.signal);
  } catch (error) {
    ended = stop.signal.aborted ? (ctx.signal.aborted ? "cancelled" : "timeout") : "lost";
    if (ended === "lost") ctx.show({ rawOutput: { error: errorMessage(error) } });
  } finally {
    clearTimeout(timer);
    ctx.signal.removeEventListener("abort", onCancel);
  }
  if (ended !== "exited") await editor.killTerminal(sessionId, terminalId).catch(() => undefined);
  const output = await editor.terminalOutput(sessionId, terminalId).catch(() => undefined);
  // Released in the background: the tool call keeps showing the output.
  void editor.releaseTerminal(sessionId, terminalId).catch(() => undefined);
  exit ??= output?.exit;
  const text = output === undefined ? "(no output)" : capped(output.output, limits.commandOutputLimit, "output") + (output.truncated ? "\n[the editor kept only the end of the output]" : "");
  const status = exit === undefined ? "unknown" : exit.signal !== null ? `killed by ${exit.signal}` : `exit code ${exit.exitCode ?? "unknown"}`;
  const rawOutput = { exitCode: exit?.exitCode ?? null, signal: exit?.signal ?? null };
  switch (ended) {
    case "timeout":
      return failed(`The command did not finish within ${timeoutMs} ms and was killed.\n${text}`, { content: terminal, rawOutput });
    case "cancelled":
      return failed(`The command was killed: the user cancelled.\n${text}`, { content: terminal, rawOutput });
    case "lost":
      return failed(`The editor did not report the command's end.\n${text}`, { content: terminal, rawOutput });
    case "exited":
      return { content: `${status}\n${text}`, isError: false, view: { status: "completed", content: terminal, rawOutput } };
    default: {
      const unreachable: never = ended;
      throw new Error(`unknown command end ${String(unreachable)}`);
    }
  }
}
