import { afterEach, describe, expect, it, vi } from "vitest";
import { toBinary } from "@bufbuild/protobuf";
import { agent } from "@byok/cursor-protocol";
import type { RunId } from "@byok/contracts";
import { silentLogger } from "@byok/platform";
import { StubSessionFactory, kvAckMessage, kvIdOf, runRequestMessage } from "../connect/testing/stub-session-factory.ts";
import type { ForwardResult, OwnerHandlers, PeerLink, ProbeResult, ServedRun } from "./peer-link.ts";
import { RunRegistry } from "./run-registry.ts";
import { RunRouter } from "./run-router.ts";

/** Adapter instances in one process, linked like NATS links them: one owner per request id, announcements to watchers. */
class MemoryNetwork {
  readonly owners = new Map<string, OwnerHandlers>();
  readonly watchers = new Map<string, Set<() => void>>();
  forwarded = 0;

  link(): PeerLink {
    return {
      probe: async (requestId, memberId): Promise<ProbeResult> => {
        const owner = this.owners.get(requestId);
        return owner ? { kind: "owned", rejection: owner.probe(memberId) } : { kind: "no_owner" };
      },
      serve: (requestId, handlers): ServedRun => {
        this.owners.set(requestId, handlers);
        for (const watch of this.watchers.get(requestId) ?? []) watch();
        return { stop: () => void (this.owners.get(requestId) === handlers && this.owners.delete(requestId)) };
      },
      forward: async (append): Promise<ForwardResult> => {
        const owner = this.owners.get(append.requestId);
        if (!owner) return { kind: "no_owner" };
        this.forwarded += 1;
        const message = append.message;
        return { kind: "answered", outcome: await owner.append({ requestId: append.requestId, memberId: append.memberId, seqno: append.seqno, message, headers: append.headers }) };
      },
      watchOwner: (requestId: RunId, onOwner) => {
        const set = this.watchers.get(requestId) ?? new Set();
        set.add(onOwner);
        this.watchers.set(requestId, set);
        return () => set.delete(onOwner);
      },
    };
  }
}

interface Instance {
  router: RunRouter;
  registry: RunRegistry;
  factory: StubSessionFactory;
}

function instance(network: MemoryNetwork, options: { runWaitMs?: number; endGraceMs?: number } = {}): Instance {
  const factory = new StubSessionFactory();
  const runWaitMs = options.runWaitMs ?? 60_000;
  const registry: RunRegistry = new RunRegistry({
    factory,
    log: silentLogger(),
    runWaitMs,
    endGraceMs: options.endGraceMs ?? 60_000,
    onForgotten: (id) => router.forgotten(id),
  });
  const router: RunRouter = new RunRouter({ registry, check: (r) => factory.check(r), peers: network.link(), log: silentLogger(), runWaitMs, retryMs: 60_000 });
  return { router, registry, factory };
}

function append(to: Instance, requestId: string, seqno: number, message: agent.AgentClientMessage = seqno === 0 ? runRequestMessage("m") : kvAckMessage(seqno), memberId = "local") {
  return to.router.append({ requestId, memberId, seqno, message, bytes: toBinary(agent.AgentClientMessageSchema, message), headers: {} });
}

afterEach(() => {
  vi.useRealTimers();
});

describe("RunRouter", () => {
  it("sends appends received by another instance to the RunSSE's owner, in seqno order, each once", async () => {
    const network = new MemoryNetwork();
    const a = instance(network);
    const b = instance(network);
    expect((await a.router.attach("r1", "local")).kind).toBe("attached");
    expect(await append(b, "r1", 0)).toEqual({ kind: "accepted" });
    const run = await a.factory.opened("r1");
    expect(b.factory.runs.size).toBe(0);
    // 3 overtakes 2 and arrives at the owner itself; 2 and a repeat of 3 come through the other instance.
    expect(await append(a, "r1", 3)).toEqual({ kind: "accepted" });
    expect(await append(b, "r1", 1)).toEqual({ kind: "accepted" });
    expect(await append(b, "r1", 3)).toEqual({ kind: "duplicate" });
    expect(await append(b, "r1", 2)).toEqual({ kind: "accepted" });
    expect(await append(a, "r1", 1)).toEqual({ kind: "duplicate" });
    expect(run.delivered.map(kvIdOf)).toEqual([1, 2, 3]);
    expect(network.forwarded).toBe(4);
  });

  it("acknowledges a run_request that arrives before any RunSSE and hands it to the owner once one appears", async () => {
    const network = new MemoryNetwork();
    const a = instance(network);
    const b = instance(network);
    expect(await append(b, "r2", 0)).toEqual({ kind: "accepted" });
    const early = append(b, "r2", 1);
    expect(a.factory.runs.size + b.factory.runs.size).toBe(0);
    expect((await a.router.attach("r2", "local")).kind).toBe("attached");
    expect(await early).toEqual({ kind: "accepted" });
    const run = await a.factory.opened("r2");
    expect(run.delivered.map(kvIdOf)).toEqual([1]);
    expect(b.factory.runs.size).toBe(0);
  });

  it("keeps a run on the instance that got the RunSSE when the run_request came there first", async () => {
    const network = new MemoryNetwork();
    const a = instance(network);
    expect(await append(a, "r3", 0)).toEqual({ kind: "accepted" });
    expect((await a.router.attach("r3", "local")).kind).toBe("attached");
    const run = await a.factory.opened("r3");
    expect(await append(a, "r3", 1)).toEqual({ kind: "accepted" });
    expect(run.delivered.map(kvIdOf)).toEqual([1]);
    expect(network.forwarded).toBe(0);
  });

  it("refuses an invalid run_request at once, without waiting for an owner", async () => {
    const network = new MemoryNetwork();
    const b = instance(network);
    expect(await append(b, "r4", 0, runRequestMessage(""))).toMatchObject({ kind: "rejected", code: "invalid_argument" });
  });

  it("gives up on an append whose RunSSE reaches no instance within RUN_WAIT_MS", async () => {
    vi.useFakeTimers();
    const network = new MemoryNetwork();
    const b = instance(network, { runWaitMs: 1_000 });
    const waiting = append(b, "r5", 2);
    let answer: unknown;
    void waiting.then((a) => (answer = a));
    await vi.advanceTimersByTimeAsync(999);
    expect(answer).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1_001);
    expect(answer).toMatchObject({ kind: "rejected", code: "deadline_exceeded" });
  });

  it("answers a second RunSSE on another instance as the owner would: another member is refused, the same member told it is open", async () => {
    const network = new MemoryNetwork();
    const a = instance(network);
    const b = instance(network);
    expect((await a.router.attach("r6", "alice")).kind).toBe("attached");
    expect(await b.router.attach("r6", "mallory")).toMatchObject({ kind: "rejected", code: "permission_denied" });
    expect(await b.router.attach("r6", "alice")).toMatchObject({ kind: "rejected", code: "failed_precondition" });
    expect(await append(b, "r6", 0, runRequestMessage("m"), "mallory")).toMatchObject({ kind: "rejected", code: "permission_denied" });
    expect(a.factory.runs.size).toBe(0);
  });

  it("stops serving a request id once its registry forgot it", async () => {
    vi.useFakeTimers();
    const network = new MemoryNetwork();
    const a = instance(network, { endGraceMs: 1_000 });
    await a.router.attach("r7", "local");
    await append(a, "r7", 0);
    (await a.factory.opened("r7")).context.stream.end({ kind: "ok" });
    expect(network.owners.has("r7")).toBe(true);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(network.owners.has("r7")).toBe(false);
    expect(a.registry.size).toBe(0);
  });

  it("answers waiting appends with unavailable on shutdown", async () => {
    const network = new MemoryNetwork();
    const b = instance(network);
    const waiting = append(b, "r8", 1);
    b.router.shutdown();
    expect(await waiting).toMatchObject({ kind: "rejected", code: "unavailable" });
  });
});
