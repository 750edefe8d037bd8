/**
 * CPU time and resident memory of other processes, from /proc (Linux only):
 * utime + stime of /proc/<pid>/stat, VmRSS of /proc/<pid>/status. Groups of
 * processes (all Postgres backends serving one database) are summed.
 *
 * `ProcessSampler.sample()` reads every tracked process at once; two samples
 * give CPU ms per process over a phase.
 */
import { readdirSync, readFileSync } from "node:fs";
import pg from "pg";

/** USER_HZ: the unit of utime/stime (100 on every mainstream Linux build). */
const CLOCK_TICKS_PER_SECOND = 100;

export interface ProcessReading {
  /** utime + stime, ms. */
  readonly cpuMs: number;
  readonly rssBytes: number;
}

export function readProcess(pid: number): ProcessReading | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the command name (which may contain spaces) in parentheses; utime/stime are fields 14/15.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const ticks = Number(fields[11]) + Number(fields[12]);
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const rssKb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
    return { cpuMs: (ticks * 1000) / CLOCK_TICKS_PER_SECOND, rssBytes: rssKb * 1024 };
  } catch {
    return undefined;
  }
}

/** nats-server processes whose command line names `port` (the server NATS_URL points at), or the only one running. */
export function findNatsServer(port: number): number | undefined {
  const candidates: Array<{ pid: number; cmdline: string }> = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, "utf8").trim() !== "nats-server") continue;
      candidates.push({ pid: Number(entry), cmdline: readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0").join(" ") });
    } catch {
      // gone, or not ours to read
    }
  }
  const byPort = candidates.filter((c) => new RegExp(`(-p|--port|-a \\S+ -p)[ =]${port}\\b`).test(c.cmdline) || c.cmdline.includes(`:${port}`));
  if (byPort.length === 1) return byPort[0]!.pid;
  return candidates.length === 1 && port === 4222 ? candidates[0]!.pid : undefined;
}

/** The nats-server `natsUrl` points at, tracked under `name`, when it runs on this machine (else nothing). */
export function trackedNatsServer(natsUrl: string, name: string): Tracked[] {
  const pid = findNatsServer(Number(new URL(natsUrl).port || 4222));
  return pid === undefined ? [] : [{ name, pids: async () => [pid] }];
}

/** Pids of the Postgres backends connected to `database` (the store's pool). */
export async function postgresBackends(adminUrl: string, database: string): Promise<number[]> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const result = await client.query<{ pid: number }>("SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()", [database]);
    return result.rows.map((r) => r.pid);
  } finally {
    await client.end();
  }
}

/** Transactions ended (committed or rolled back) in `database` so far, as Postgres's statistics count them (they lag by up to a second). */
export async function postgresTransactions(adminUrl: string, database: string): Promise<number> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const result = await client.query<{ ended: string }>("SELECT xact_commit + xact_rollback AS ended FROM pg_stat_database WHERE datname = $1", [database]);
    return Number(result.rows[0]?.ended ?? 0);
  } finally {
    await client.end();
  }
}

export interface Tracked {
  readonly name: string;
  /** Pids now (a group may change between samples). */
  pids(): Promise<readonly number[]>;
}

export interface Sample {
  readonly at: number;
  /** name -> cpu ms per pid and summed rss. */
  readonly byName: ReadonlyMap<string, { cpuByPid: ReadonlyMap<number, number>; rssBytes: number }>;
}

export class ProcessSampler {
  readonly tracked: readonly Tracked[];

  constructor(tracked: readonly Tracked[]) {
    this.tracked = tracked;
  }

  async sample(): Promise<Sample> {
    const byName = new Map<string, { cpuByPid: Map<number, number>; rssBytes: number }>();
    for (const t of this.tracked) {
      const cpuByPid = new Map<number, number>();
      let rssBytes = 0;
      for (const pid of await t.pids()) {
        const r = readProcess(pid);
        if (r === undefined) continue;
        cpuByPid.set(pid, r.cpuMs);
        rssBytes += r.rssBytes;
      }
      byName.set(t.name, { cpuByPid, rssBytes });
    }
    return { at: performance.now(), byName };
  }
}

/** CPU ms each tracked name used between two samples (a pid that appeared in between counts from 0). */
export function cpuBetween(before: Sample, after: Sample): Map<string, number> {
  const out = new Map<string, number>();
  for (const [name, now] of after.byName) {
    const then = before.byName.get(name)?.cpuByPid ?? new Map<number, number>();
    let ms = 0;
    for (const [pid, cpu] of now.cpuByPid) ms += cpu - (then.get(pid) ?? 0);
    out.set(name, ms);
  }
  return out;
}

/** CPU ms of the named processes in `used` (all of them without names); a name not there counts 0. */
export function cpuSum(used: ReadonlyMap<string, number>, names?: readonly string[]): number {
  let ms = 0;
  for (const [name, cpu] of used) if (names === undefined || names.includes(name)) ms += cpu;
  return ms;
}

/** What `work` cost: each tracked process's CPU ms, this process's own CPU ms and the wall ms it took. */
export interface CpuDuring<T> {
  readonly result: T;
  readonly cpu: Map<string, number>;
  readonly selfMs: number;
  readonly wallMs: number;
}

/** Runs `work` between two samples of `sampler` and this process's CPU usage. */
export async function cpuDuring<T>(sampler: ProcessSampler, work: () => Promise<T>): Promise<CpuDuring<T>> {
  const before = await sampler.sample();
  const selfBefore = process.cpuUsage();
  const result = await work();
  const self = process.cpuUsage(selfBefore);
  const after = await sampler.sample();
  return { result, cpu: cpuBetween(before, after), selfMs: (self.user + self.system) / 1000, wallMs: after.at - before.at };
}
