/**
 * `npm start` as a real process for the supervisor tests: started either as
 * `node scripts/start.ts` or through npm (`npm start`, so signals reach the npm
 * process first), with its output collected and its addresses file read.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import net from "node:net";
import { createInterface } from "node:readline";
import { npmStartEnv } from "@byok/test-support/start-env";
import { waitFor, type TestBus, type TestDatabase } from "@byok/test-support/infra";

export const ROOT = new URL("../", import.meta.url).pathname;

export interface Supervisor {
  child: ChildProcess;
  /** stdout lines: "<service> | <log line>" */
  lines: string[];
  stderr: string[];
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** stderr and the last stdout lines, for assertion messages. */
  context(): string;
}

export type Launcher = "node" | "npm";

export interface SupervisorPlace {
  readonly db: TestDatabase;
  readonly bus: TestBus;
  /** The gateway configuration file (writeHarnessGatewayConfig). */
  readonly configPath: string;
  /** The test's directory: DATA_DIR is its data/. */
  readonly dir: string;
}

/**
 * The environment of a gateway on the test's database, bus prefix and data
 * directory: every listener on a free port (the ops listeners too), the
 * mock LLM's key, JSON logs at info; `overrides` last.
 */
export function supervisorEnv(place: SupervisorPlace, overrides: Record<string, string> = {}): NodeJS.ProcessEnv {
  const { db, bus, configPath, dir } = place;
  return npmStartEnv({ databaseUrl: db.url, natsUrl: bus.natsUrl, busPrefix: bus.prefix, configPath, dataDir: join(dir, "data") }, overrides);
}

/** Starts the supervisor; `npm` runs `npm start` with the npm that runs this test (or the one on PATH). */
export function startSupervisor(env: NodeJS.ProcessEnv, launcher: Launcher = "node"): Supervisor {
  // npm starts `node` from PATH: make it this Node (>= 22.18).
  const childEnv = { ...env, PATH: `${dirname(process.execPath)}:${env["PATH"] ?? ""}` };
  const npmCli = process.env["npm_execpath"];
  const [command, args] =
    launcher === "node"
      ? [process.execPath, [join(ROOT, "scripts/start.ts")]]
      : npmCli !== undefined && npmCli.endsWith(".js")
        ? [process.execPath, [npmCli, "start", "--silent"]]
        : ["npm", ["start", "--silent"]];
  const child = spawn(command, args, { cwd: ROOT, env: childEnv, stdio: ["ignore", "pipe", "pipe"] });
  const lines: string[] = [];
  const stderr: string[] = [];
  createInterface({ input: child.stdout! }).on("line", (l) => lines.push(l));
  createInterface({ input: child.stderr! }).on("line", (l) => stderr.push(l));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
  return { child, lines, stderr, exit, context: () => `stderr:\n${stderr.join("\n")}\nstdout (last 40):\n${lines.slice(-40).join("\n")}` };
}

export function hasExited(s: Supervisor): boolean {
  return s.child.exitCode !== null || s.child.signalCode !== null;
}

/** Waits until the supervisor printed its ready lines (the last one says how to stop it), or exited. */
export async function waitUntilReady(s: Supervisor, timeoutMs = 90_000): Promise<void> {
  await waitFor(() => s.stderr.some((l) => l.includes("Ctrl-C stops the gateway")) || hasExited(s), "the gateway to start", timeoutMs);
  if (hasExited(s)) throw new Error(`npm start exited before it was ready\n${s.context()}`);
}

/** Resolves with the exit, or "timeout". */
export function exitWithin(s: Supervisor, ms: number): Promise<{ code: number | null; signal: NodeJS.Signals | null } | "timeout"> {
  return Promise.race([s.exit, new Promise<"timeout">((r) => setTimeout(() => r("timeout"), ms).unref())]);
}

/** The JSON log entries a service printed through the supervisor. */
export function logsOf(s: Supervisor, service: string): Array<Record<string, unknown>> {
  const out: Array<Record<string, unknown>> = [];
  for (const line of s.lines) {
    const bar = line.indexOf(" | ");
    if (bar < 0 || line.slice(0, bar).trim() !== service) continue;
    try {
      out.push(JSON.parse(line.slice(bar + 3)) as Record<string, unknown>);
    } catch {
      // not a JSON log line
    }
  }
  return out;
}

export interface AddressesFile {
  pid: number;
  state: string;
  natsUrl: string;
  busPrefix: string;
  proxyUrl: string;
  caFile: string;
  adapterUrl: string;
  adminUrl: string;
  services: Record<string, number>;
}

export function readAddresses(dataDir: string): AddressesFile {
  return JSON.parse(readFileSync(join(dataDir, "local-gateway.json"), "utf8")) as AddressesFile;
}

export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export function portAccepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: "127.0.0.1", port });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

/** A TCP listener on a free loopback port (something else using "the" port). */
export async function occupyPort(): Promise<{ port: number; close(): Promise<void> }> {
  const server = net.createServer((socket) => socket.destroy());
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const port = (server.address() as net.AddressInfo).port;
  return { port, close: () => new Promise((resolve) => server.close(() => resolve())) };
}
