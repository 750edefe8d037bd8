/**
 * Runs a ServerCommand (local-servers.ts) as a plain child process: resolves
 * once it reports readiness, rejects with its last output lines when it exits
 * first or takes too long. `stop()` sends SIGTERM, then SIGKILL to its whole
 * process group after a grace period (the embedded Postgres helper has the
 * server as its own child). For callers without a supervisor of their own
 * (test runs); `npm start` runs the same commands under its supervisor.
 */
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { LocalInfraError, type ServerCommand } from "./local-servers.ts";

const KEPT_LINES = 30;

export interface ServerProcess {
  readonly name: string;
  readonly url: string;
  /** The last lines it printed. */
  output(): string;
  /** SIGTERM, SIGKILL after `graceMs`; resolves once it has exited. */
  stop(graceMs?: number): Promise<void>;
}

export async function startServerProcess(command: ServerCommand, onLine?: (line: string) => void): Promise<ServerProcess> {
  const child = spawn(command.command, [...command.args], { env: command.env, stdio: ["ignore", "pipe", "pipe"], detached: true });
  const lines: string[] = [];
  const output = (): string => lines.join("\n");
  const exited = new Promise<string>((resolve) => {
    child.once("error", (err) => resolve(`cannot start ${command.command}: ${err.message}`));
    child.once("exit", (code, signal) => resolve(signal !== null ? `signal ${signal}` : `exit code ${String(code)}`));
  });
  const ready = new Promise<void>((resolve) => {
    const onOutput = (line: string): void => {
      onLine?.(line);
      lines.push(line);
      if (lines.length > KEPT_LINES) lines.shift();
      if (command.isReady(line)) resolve();
    };
    createInterface({ input: child.stdout }).on("line", onOutput);
    createInterface({ input: child.stderr }).on("line", onOutput);
  });

  const killGroup = (signal: NodeJS.Signals): void => {
    try {
      if (child.pid !== undefined) process.kill(-child.pid, signal);
    } catch {
      child.kill(signal);
    }
  };
  const stop = async (graceMs = 10_000): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill("SIGTERM");
    const timer = setTimeout(() => killGroup("SIGKILL"), graceMs);
    await exited;
    clearTimeout(timer);
  };

  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<"timeout">((resolve) => (timer = setTimeout(() => resolve("timeout"), command.readyTimeoutMs)));
  const first = await Promise.race([ready.then(() => "ready" as const), exited, timedOut]);
  clearTimeout(timer);
  if (first !== "ready") {
    await stop(2_000);
    const why = first === "timeout" ? `did not report readiness within ${command.readyTimeoutMs / 1000} s` : `exited during start-up (${first})`;
    throw new LocalInfraError(`${command.name} ${why}; its last output:\n${output()}`);
  }
  return { name: command.name, url: command.url, output, stop };
}
