/**
 * A supervised child process: its own process group (so a terminal Ctrl-C
 * reaches only the supervisor, which then stops children in order), output
 * split into lines for the shared log stream, readiness from an output line
 * (nats-server, the Postgres helper) or from the service's status message on
 * the IPC channel (@byok/platform/service-status: independent of LOG_LEVEL),
 * and a stop that escalates from SIGINT to SIGKILL.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import { parseServiceStatus, type ServiceEndpoints } from "@byok/platform/service-status";
import { logMessage, type PrintLine } from "./log-lines.ts";

export interface ChildSpec {
  name: string;
  command: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  /** Decides readiness from one output line; undefined = ready once spawned (or, with `ipc`, once it says so). */
  readyWhen?: (line: string) => boolean;
  /** A Node service: readiness and start-up failures come as status messages over an IPC channel. */
  ipc?: boolean;
}

/** How a service said it failed to start (a listen error names its port). */
export interface StartFailure {
  readonly message: string;
  readonly code?: string;
  readonly address?: string;
  readonly port?: number;
}

export type ChildExit = { code: number | null; signal: NodeJS.Signals | null };

export class ChildStartError extends Error {
  override readonly name = "ChildStartError";
  /** Set when the child reported why it failed (status message). */
  readonly failure: StartFailure | undefined;
  constructor(message: string, failure?: StartFailure) {
    super(message);
    this.failure = failure;
  }
}

export class SupervisedChild {
  readonly name: string;
  readonly exited: Promise<ChildExit>;
  private readonly child: ChildProcess;
  private readonly readyPromise: Promise<void>;
  private exitInfo: ChildExit | undefined;
  private lastLines: string[] = [];
  private reportedEndpoints: ServiceEndpoints = {};
  private started = false;

  constructor(spec: ChildSpec, print: PrintLine) {
    this.name = spec.name;
    const stdio: ("ignore" | "pipe" | "ipc")[] = spec.ipc === true ? ["ignore", "pipe", "pipe", "ipc"] : ["ignore", "pipe", "pipe"];
    this.child = spawn(spec.command, spec.args, { env: spec.env, stdio, detached: true });
    let markReady: () => void = () => undefined;
    let failReady: (err: Error) => void = () => undefined;
    this.readyPromise = new Promise<void>((resolve, reject) => {
      markReady = () => {
        this.started = true;
        resolve();
      };
      failReady = reject;
    });
    if (spec.readyWhen === undefined && spec.ipc !== true) this.child.once("spawn", () => markReady());
    if (spec.ipc === true) {
      this.child.on("message", (message) => {
        const status = parseServiceStatus(message);
        if (status?.kind === "started") {
          this.reportedEndpoints = status.endpoints;
          markReady();
        } else if (status?.kind === "failed") {
          failReady(new ChildStartError(`${spec.name} failed to start: ${status.message}`, status));
        }
      });
    }
    const onLine = (line: string): void => {
      print(spec.name, line);
      this.lastLines = [...this.lastLines.slice(-19), line];
      if (spec.readyWhen?.(line) === true) markReady();
      if (spec.ipc === true) return;
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
        const exit = { code, signal };
        this.exitInfo = exit;
        const exitedEarly = (): void => failReady(new ChildStartError(`${spec.name} exited during start-up (${describeExit(exit)})`));
        // A status message sent just before exiting is delivered before the channel reports its end.
        if (this.child.connected) this.child.once("disconnect", exitedEarly);
        else exitedEarly();
        resolve(exit);
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

  /** The addresses the service reported when it started ({} before, or without IPC). */
  get endpoints(): ServiceEndpoints {
    return this.reportedEndpoints;
  }

  /** True once the child reported readiness. */
  get hasStarted(): boolean {
    return this.started;
  }

  get pid(): number | undefined {
    return this.child.pid;
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
