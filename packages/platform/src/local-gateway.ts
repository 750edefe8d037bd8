/**
 * The addresses file of a gateway started with `npm start`:
 * `<data dir>/local-gateway.json` (data dir: DATA_DIR, default `.data` in the
 * repository). The supervisor claims it before it starts anything (so a
 * second `npm start` on the same data says "already running" instead of
 * failing on a port), fills in the addresses once every service is up, and
 * removes it when it stops. The admin CLI reads it to find the running
 * gateway's NATS server and bus prefix; members' setup reads the proxy URL
 * and CA file from it on the gateway machine.
 *
 * A file whose process is gone (killed, machine restarted) is stale: it is
 * reported as such and replaced by the next `npm start`.
 */
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";

export const LOCAL_GATEWAY_FILE = "local-gateway.json";

const infoSchema = z.object({
  /** The supervisor's process id. */
  pid: z.number().int().positive(),
  state: z.enum(["starting", "running"]),
  startedAt: z.string(),
  /** NATS server every service uses (embedded or NATS_URL). */
  natsUrl: z.string().optional(),
  busPrefix: z.string().optional(),
  /** The edge proxy (Cursor's http.proxy without the key), reachable from this machine. */
  proxyUrl: z.string().optional(),
  /** The address the proxy listens on (PROXY_HOST:port; 0.0.0.0 = every interface). */
  proxyListen: z.string().optional(),
  /** The team CA certificate (absolute path). */
  caFile: z.string().optional(),
  adapterUrl: z.string().optional(),
  /** The admin page (and its API), reachable from this machine. */
  adminUrl: z.string().optional(),
  /** Process id of each service. */
  services: z.record(z.string(), z.number().int()).optional(),
});

export type LocalGatewayInfo = z.infer<typeof infoSchema>;

export type LocalGatewayState =
  | { kind: "none"; path: string }
  | { kind: "running"; path: string; info: LocalGatewayInfo }
  | { kind: "stale"; path: string; info: LocalGatewayInfo }
  | { kind: "unreadable"; path: string; message: string };

export function localGatewayPath(dataDir: string): string {
  return join(dataDir, LOCAL_GATEWAY_FILE);
}

/** True while `pid` is a live process that is not obviously something else (Linux: its command line names start.ts). */
export function isGatewayProcess(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EPERM") return false;
  }
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("start.ts");
  } catch {
    return true; // no /proc (macOS): a live pid is taken as the gateway
  }
}

/** Tells whether the pid recorded in the file is the live gateway (tests pass their own). */
export type GatewayProcessCheck = (pid: number) => boolean;

export function readLocalGateway(dataDir: string, isAlive: GatewayProcessCheck = isGatewayProcess): LocalGatewayState {
  const path = localGatewayPath(dataDir);
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return { kind: "none", path };
    return { kind: "unreadable", path, message: (err as Error).message };
  }
  let parsed;
  try {
    parsed = infoSchema.safeParse(JSON.parse(text));
  } catch (err) {
    return { kind: "unreadable", path, message: `not JSON: ${(err as Error).message}` };
  }
  if (!parsed.success) return { kind: "unreadable", path, message: parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ") };
  return isAlive(parsed.data.pid) ? { kind: "running", path, info: parsed.data } : { kind: "stale", path, info: parsed.data };
}

export type ClaimOutcome = { kind: "claimed"; path: string } | { kind: "taken"; path: string; info: LocalGatewayInfo };

/**
 * Creates the file for this process (state "starting") unless a live gateway
 * holds it. A stale or unreadable file is replaced. Creation is exclusive, so
 * of two concurrent starts one wins.
 */
export function claimLocalGateway(dataDir: string, info: LocalGatewayInfo, isAlive: GatewayProcessCheck = isGatewayProcess): ClaimOutcome {
  mkdirSync(dataDir, { recursive: true });
  const path = localGatewayPath(dataDir);
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = openSync(path, "wx", 0o600);
      try {
        writeSync(fd, `${JSON.stringify(info, null, 2)}\n`);
      } finally {
        closeSync(fd);
      }
      return { kind: "claimed", path };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
    const current = readLocalGateway(dataDir, isAlive);
    if (current.kind === "running") return { kind: "taken", path, info: current.info };
    rmSync(path, { force: true });
  }
  throw new Error(`${path}: could not be claimed (another gateway keeps starting?)`);
}

/** Replaces the file's content (atomically) while this process holds it. */
export function updateLocalGateway(dataDir: string, info: LocalGatewayInfo): void {
  const path = localGatewayPath(dataDir);
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(info, null, 2)}\n`, { mode: 0o600 });
  renameSync(temporary, path);
}

/** Removes the file if process `pid` holds it. */
export function releaseLocalGateway(dataDir: string, pid: number): void {
  const path = localGatewayPath(dataDir);
  if (!existsSync(path)) return;
  const current = readLocalGateway(dataDir, () => true);
  if ((current.kind === "running" || current.kind === "stale") && current.info.pid === pid) rmSync(path, { force: true });
}
