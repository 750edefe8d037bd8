/**
 * A supervised child process: its own process group (so a terminal Ctrl-C
 * reaches only the supervisor, which then stops children in order), output
 * split into lines for the shared log stream, readiness from its log, and a
 * stop that escalates from SIGINT to SIGKILL.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import { logMessage, type PrintLine } from "./log-lines.ts";

export interface ChildSpec {
  name: string;
  command: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  /** Decides readiness from one output line; undefined = ready once spawned. */
  readyWhen?: (line: string) => boolean;
}

export type ChildExit = { code: number | null; signal: NodeJS.Signals | null };

export class ChildStartError extends Error {
  override readonly name = "ChildStartError";
}

export class SupervisedChild {
  readonly name: string;
  readonly exited: Promise<ChildExit>;
  private readonly child: ChildProcess;
  private readonly readyPromise: Promise<void>;
  private exitInfo: ChildExit | undefined;
  private lastLines: string[] = [];

  constructor(spec: ChildSpec, print: PrintLine) {
    this.name = spec.name;
    this.child = spawn(spec.command, spec.args, { env: spec.env, stdio: ["ignore", "pipe", "pipe"], detached: true });
    let markReady: () => void = () => undefined;
    let failReady: (err: Error) => void = () => undefined;
    this.readyPromise = new Promise<void>((resolve, reject) => {
      markReady = resolve;
      failReady = reject;
    });
    if (spec.readyWhen === undefined) this.child.once("spawn", () => markReady());
    const onLine = (line: string): void => {
      print(spec.name, line);
      this.lastLines = [...this.lastLines.slice(-19), line];
      if (spec.readyWhen?.(line) === true) markReady();
      const log = logMessage(line);
      if (log !== undefined && log.level >= 60 && /failed to start/.test(log.msg)) failReady(new ChildStartError(`${spec.name}: ${log.msg}`));
    };
    createInterface({ input: this.child.stdout! }).on("line", onLine);
    createInterface({ input: this.child.stderr! }).on("line", onLine);
    this.exited = new Promise<ChildExit>((resolve) => {
      this.child.once("error", (err) => {
        failReady(new ChildStartError(`${spec.name}: cannot start ${spec.command}: ${err.message}`));
        this.exitInfo = { code: null, signal: null };
        resolve(this.exitInfo);
      });
      this.child.once("exit", (code, signal) => {
        this.exitInfo = { code, signal };
        failReady(new ChildStartError(`${spec.name} exited during start-up (${describeExit(this.exitInfo)})`));
        resolve(this.exitInfo);
      });
    });
  }

  /** Resolves when the child reported readiness; rejects if it exits or reports a failed start first. */
  ready(timeoutMs: number): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new ChildStartError(`${this.name} did not report readiness within ${timeoutMs / 1000} s`)), timeoutMs);
      this.readyPromise.then(
        () => {
          clearTimeout(timer);
          resolve();
        },
        (err: unknown) => {
          clearTimeout(timer);
          reject(err instanceof Error ? err : new Error(String(err)));
        },
      );
    });
  }

  get running(): boolean {
    return this.exitInfo === undefined;
  }

  /** The last lines of output, for start-up failure messages. */
  get recentOutput(): readonly string[] {
    return this.lastLines;
  }

  /** SIGINT (or `signal`), then SIGKILL after `graceMs`. */
  async stop(graceMs: number, signal: NodeJS.Signals = "SIGINT"): Promise<ChildExit> {
    if (this.exitInfo !== undefined) return this.exitInfo;
    this.signal(signal);
    const timer = setTimeout(() => this.signal("SIGKILL"), graceMs);
    const exit = await this.exited;
    clearTimeout(timer);
    return exit;
  }

  kill(): void {
    if (this.exitInfo === undefined) this.signal("SIGKILL");
  }

  private signal(signal: NodeJS.Signals): void {
    if (signal !== "SIGKILL") {
      // Only the child: it stops its own children (the Postgres helper stops the server).
      this.child.kill(signal);
      return;
    }
    try {
      // The child leads its own process group: take down grandchildren (a Postgres server) too.
      if (this.child.pid !== undefined) process.kill(-this.child.pid, "SIGKILL");
    } catch {
      this.child.kill("SIGKILL");
    }
  }
}

export function describeExit(exit: ChildExit): string {
  return exit.signal !== null ? `signal ${exit.signal}` : `exit code ${exit.code ?? "unknown"}`;
}
