import { afterEach, describe, expect, it, vi } from "vitest";
import { silentLogger } from "@byok/platform";
import { StubSessionFactory, kvAckMessage, kvIdOf, runRequestMessage } from "../connect/testing/stub-session-factory.ts";
import { RunRegistry, type RunRegistryOptions } from "./run-registry.ts";
import type { RunOpenContext, RunSession } from "./session-port.ts";

function registry(factory = new StubSessionFactory(), options: Partial<RunRegistryOptions> = {}): { registry: RunRegistry; factory: StubSessionFactory } {
  return { factory, registry: new RunRegistry({ factory, log: silentLogger(), runWaitMs: 60_000, endGraceMs: 60_000, ...options }) };
}

function append(reg: RunRegistry, requestId: string, seqno: number, message = seqno === 0 ? runRequestMessage("m") : kvAckMessage(seqno)) {
  return reg.append({ requestId, memberId: "local", seqno, message, headers: {} });
}

afterEach(() => {
  vi.useRealTimers();
});

describe("RunRegistry", () => {
  it("forgets a request id once its stream ended and the grace period passed", async () => {
    vi.useFakeTimers();
    const { registry: reg, factory } = registry(undefined, { endGraceMs: 60_000 });
    await append(reg, "r1", 0);
    expect(reg.size).toBe(1);
    (await factory.opened("r1")).context.stream.end({ kind: "ok" });
    await vi.advanceTimersByTimeAsync(59_999);
    expect(reg.size).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(reg.size).toBe(0);
  });

  it("acknowledges and drops late appends during the grace period", async () => {
    const { registry: reg, factory } = registry();
    await append(reg, "r2", 0);
    const run = await factory.opened("r2");
    run.context.stream.end({ kind: "ok" });
    expect(await append(reg, "r2", 1)).toEqual({ kind: "accepted" });
    expect(await append(reg, "r2", 1)).toEqual({ kind: "duplicate" });
    // The ended run's session is let go: nothing more reaches it.
    expect(run.delivered).toEqual([]);
    expect(await append(reg, "r2", 2)).toEqual({ kind: "accepted" });
    expect(run.delivered).toEqual([]);
  });

  it("keeps ended runs apart from the bound on runs in flight, and forgets the oldest ended past its own bound", async () => {
    const forgotten: string[] = [];
    const { registry: reg, factory } = registry(undefined, { maxSlots: 1, maxEndedSlots: 2, onForgotten: (id) => forgotten.push(id) });
    for (const id of ["e1", "e2", "e3"]) {
      expect(await append(reg, id, 0)).toEqual({ kind: "accepted" });
      (await factory.opened(id)).context.stream.end({ kind: "ok" });
    }
    expect(forgotten).toEqual(["e1"]);
    expect(reg.size).toBe(2);
    expect(reg.memberOf("e2")).toBe("local");
    expect(await append(reg, "live", 0)).toEqual({ kind: "accepted" });
    expect(await append(reg, "one-too-many", 0)).toMatchObject({ kind: "rejected", code: "resource_exhausted" });
  });

  it("cancels an open run whose RunSSE never attaches", async () => {
    vi.useFakeTimers();
    const { registry: reg, factory } = registry(undefined, { runWaitMs: 60_000 });
    await append(reg, "r3", 0);
    const run = await factory.opened("r3");
    await vi.advanceTimersByTimeAsync(59_999);
    expect(run.disconnects).toBe(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(run.disconnects).toBe(1);
    expect(reg.attach("r3", "local")).toMatchObject({ kind: "rejected", code: "failed_precondition" });
  });

  it("keeps delivering in order when the session throws on one append", async () => {
    const delivered: number[] = [];
    const throwing = new StubSessionFactory();
    throwing.open = (_context: RunOpenContext): RunSession => ({
      deliver: (message) => {
        const id = kvIdOf(message) ?? -1;
        delivered.push(id);
        if (id === 1) throw new Error("session bug");
      },
      clientDisconnected: () => {},
    });
    const { registry: reg } = registry(throwing);
    await append(reg, "r4", 0);
    expect(await append(reg, "r4", 2)).toEqual({ kind: "accepted" });
    expect(await append(reg, "r4", 1)).toEqual({ kind: "accepted" });
    expect(delivered).toEqual([1, 2]);
  });

  it("turns a session that fails to open into an internal error for the run", async () => {
    const failing = new StubSessionFactory();
    failing.open = () => {
      throw new Error("boom");
    };
    const { registry: reg } = registry(failing);
    const attached = reg.attach("r5", "local");
    if (attached.kind !== "attached") throw new Error("expected to attach");
    expect(await append(reg, "r5", 0)).toMatchObject({ kind: "rejected", code: "internal" });
    const end = await attached.stream.next(1_000, new AbortController().signal);
    expect(end).toMatchObject({ kind: "end", outcome: { kind: "error", code: "internal" } });
  });

  it("ends open runs with unavailable and tells their sessions on shutdown", async () => {
    const { registry: reg, factory } = registry();
    await append(reg, "r6", 0);
    const run = await factory.opened("r6");
    const waiting = append(reg, "r7", 1);
    reg.shutdown();
    expect(run.disconnects).toBe(1);
    expect(run.context.stream.ended).toBe(true);
    expect(await waiting).toMatchObject({ kind: "rejected" });
    expect(reg.size).toBe(0);
  });

  it("bounds the number of request ids in flight", async () => {
    const { registry: reg } = registry(undefined, { maxSlots: 1 });
    await append(reg, "a", 0);
    expect(await append(reg, "b", 0)).toMatchObject({ kind: "rejected", code: "resource_exhausted" });
    expect(reg.attach("c", "local")).toMatchObject({ kind: "rejected", code: "resource_exhausted" });
  });
});
