/**
 * How fast this machine is right now, in three small fixed workloads, so that
 * runs on different days (or hours: a shared VM's speed moves) can be told
 * apart from changes in the code:
 *
 * - compute: a fixed loop of integer arithmetic, ms;
 * - syscall: one fstat(2), µs each (a cheap system call: what a kernel entry costs here);
 * - loopback: one TCP round trip of a few bytes between two sockets of this process, µs each.
 *
 * Each is the best of three tries (the least disturbed). Takes about a second.
 */
import { fstatSync } from "node:fs";
import { createServer, connect, type AddressInfo, type Socket } from "node:net";
import { performance } from "node:perf_hooks";

export interface MachineSpeed {
  readonly computeMs: number;
  readonly syscallUs: number;
  readonly loopbackUs: number;
}

const LOOP_ITERATIONS = 15_000_000;
const SYSCALLS = 50_000;
const ROUND_TRIPS = 1_000;

function computeOnce(): number {
  const start = performance.now();
  let x = 0;
  for (let i = 0; i < LOOP_ITERATIONS; i++) x = (x + i * 7) % 1_000_003;
  const ms = performance.now() - start;
  if (x < 0) throw new Error("unreachable");
  return ms;
}

function syscallOnce(): number {
  const start = performance.now();
  for (let i = 0; i < SYSCALLS; i++) fstatSync(0);
  return ((performance.now() - start) * 1000) / SYSCALLS;
}

async function loopbackOnce(): Promise<number> {
  const server = createServer((socket) => socket.on("data", (d) => socket.write(d)));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const client: Socket = connect(port, "127.0.0.1");
  client.setNoDelay(true);
  await new Promise<void>((resolve) => client.once("connect", resolve));
  try {
    const start = performance.now();
    for (let i = 0; i < ROUND_TRIPS; i++) {
      await new Promise<void>((resolve) => {
        client.once("data", () => resolve());
        client.write("ping");
      });
    }
    return ((performance.now() - start) * 1000) / ROUND_TRIPS;
  } finally {
    client.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

export async function measureMachineSpeed(): Promise<MachineSpeed> {
  const compute: number[] = [];
  const syscall: number[] = [];
  const loopback: number[] = [];
  for (let i = 0; i < 3; i++) {
    compute.push(computeOnce());
    syscall.push(syscallOnce());
    loopback.push(await loopbackOnce());
  }
  return { computeMs: Math.min(...compute), syscallUs: Math.min(...syscall), loopbackUs: Math.min(...loopback) };
}

export function formatMachineSpeed(speed: MachineSpeed): string {
  return `compute ${speed.computeMs.toFixed(0)} ms, fstat ${speed.syscallUs.toFixed(2)} µs, loopback TCP round trip ${speed.loopbackUs.toFixed(0)} µs`;
}
