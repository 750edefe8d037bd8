/**
 * What the adapter asks of the editor, over the ACP connection of the
 * session's current bridge link: session updates, permission requests, file
 * reads and writes, terminals. One small interface over the SDK's agent-side
 * context, so the tools and the turn do not depend on the SDK's calling
 * conventions (and tests can play the editor).
 */
import { acpMethods, type AgentContext, type PermissionOption, type RequestPermissionOutcome, type SessionUpdate, type ToolCallUpdate } from "./acp-types.ts";

export interface TerminalRun {
  readonly terminalId: string;
}

export interface TerminalExit {
  readonly exitCode: number | null;
  readonly signal: string | null;
}

export interface TerminalOutput {
  readonly output: string;
  readonly truncated: boolean;
  readonly exit: TerminalExit | undefined;
}

export interface EditorClient {
  update(sessionId: string, update: SessionUpdate): Promise<void>;
  requestPermission(sessionId: string, toolCall: ToolCallUpdate, options: PermissionOption[], signal: AbortSignal): Promise<RequestPermissionOutcome>;
  readTextFile(sessionId: string, path: string, range: { line?: number; limit?: number }, signal: AbortSignal): Promise<string>;
  writeTextFile(sessionId: string, path: string, content: string, signal: AbortSignal): Promise<void>;
  createTerminal(sessionId: string, run: { command: string; args: string[]; cwd: string; outputByteLimit: number }): Promise<TerminalRun>;
  waitForExit(sessionId: string, terminalId: string, signal: AbortSignal): Promise<TerminalExit>;
  terminalOutput(sessionId: string, terminalId: string): Promise<TerminalOutput>;
  killTerminal(sessionId: string, terminalId: string): Promise<void>;
  releaseTerminal(sessionId: string, terminalId: string): Promise<void>;
}

export function editorClientOf(context: AgentContext): EditorClient {
  return {
    update: (sessionId, update) => context.notify(acpMethods.client.session.update, { sessionId, update }),
    async requestPermission(sessionId, toolCall, options, signal) {
      const response = await context.request(acpMethods.client.session.requestPermission, { sessionId, toolCall, options }, { cancellationSignal: signal, stopWaitingOnCancel: true });
      return response.outcome;
    },
    async readTextFile(sessionId, path, range, signal) {
      const response = await context.request(
        acpMethods.client.fs.readTextFile,
        { sessionId, path, ...(range.line === undefined ? {} : { line: range.line }), ...(range.limit === undefined ? {} : { limit: range.limit }) },
        { cancellationSignal: signal, stopWaitingOnCancel: true },
      );
      return response.content;
    },
    async writeTextFile(sessionId, path, content, signal) {
      await context.request(acpMethods.client.fs.writeTextFile, { sessionId, path, content }, { cancellationSignal: signal, stopWaitingOnCancel: true });
    },
    async createTerminal(sessionId, run) {
      const response = await context.request(acpMethods.client.terminal.create, { sessionId, command: run.command, args: run.args, cwd: run.cwd, outputByteLimit: run.outputByteLimit });
      return { terminalId: response.terminalId };
    },
    async waitForExit(sessionId, terminalId, signal) {
      const response = await context.request(acpMethods.client.terminal.waitForExit, { sessionId, terminalId }, { cancellationSignal: signal, stopWaitingOnCancel: true });
      return { exitCode: response.exitCode ?? null, signal: response.signal ?? null };
    },
    async terminalOutput(sessionId, terminalId) {
      const response = await context.request(acpMethods.client.terminal.output, { sessionId, terminalId });
      const exit = response.exitStatus ?? undefined;
      return { output: response.output, truncated: response.truncated, exit: exit === undefined ? undefined : { exitCode: exit.exitCode ?? null, signal: exit.signal ?? null } };
    },
    async killTerminal(sessionId, terminalId) {
      await context.request(acpMethods.client.terminal.kill, { sessionId, terminalId });
    },
    async releaseTerminal(sessionId, terminalId) {
      await context.request(acpMethods.client.terminal.release, { sessionId, terminalId });
    },
  };
}
