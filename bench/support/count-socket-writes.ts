/**
 * Preload that counts socket writes (each `_write` / `_writev` of a
 * net.Socket is one write system call or one TLS record batch) by peer: the
 * NATS server, Postgres, or anything else. Each process writes
 * <COUNT_WRITES_DIR>/<pid>.json (its argv and the counts) every second and
 * at exit. For a bench run of the whole deployment:
 *
 *   COUNT_WRITES_DIR=/tmp/writes NODE_OPTIONS="--import ./bench/support/count-socket-writes.ts" \
 *     BENCH_QUICK=1 BENCH_CPU_TURNS=200 ... node bench/cursor-path.ts
 *
 * and divide by the turns the run made (warm-up, sequential and CPU turns).
 */
import type net from "node:net";
import { mkdirSync, writeFileSync } from "node:fs";
import { onSocketWrites } from "@byok/test-support/socket-writes";

const dir = process.env["COUNT_WRITES_DIR"] ?? "/tmp/socket-writes";
const portOf = (url: string, fallback: number): number => {
  try {
    return Number(new URL(url).port || fallback);
  } catch {
    return fallback;
  }
};
const natsPort = portOf(process.env["NATS_URL"] ?? "", 4222);
const pgPort = portOf(process.env["DATABASE_URL"] ?? "", 5432);
const counts: Record<string, number> = {};
const count = (socket: net.Socket): void => {
  const peer = socket.remotePort === natsPort ? "nats" : socket.remotePort === pgPort ? "postgres" : "other";
  counts[peer] = (counts[peer] ?? 0) + 1;
};
onSocketWrites(count);
const save = (): void => {
  try {
    mkdirSync(dir, { recursive: true });
    writeFileSync(`${dir}/${process.pid}.json`, JSON.stringify({ argv: process.argv.slice(1).join(" "), counts }));
  } catch {
    // a bench aid: never fail the process
  }
};
process.on("exit", save);
setInterval(save, 1000).unref();
