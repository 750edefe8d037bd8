import { describe, expect, it } from "vitest";
import { RouteTable } from "./route-table.ts";

describe("RouteTable", () => {
  it("binds a request id to its first member", () => {
    const t = new RouteTable({ ttlMs: 60_000 });
    expect(t.claimRun("r1", "alice")).toEqual({ kind: "ok", route: undefined });
    expect(t.claimRun("r1", "bob")).toEqual({ kind: "forbidden" });
    expect(t.decide("r1", "bob", "local")).toEqual({ kind: "forbidden" });
    expect(t.decide("r1", "alice", "local")).toEqual({ kind: "ok", route: "local" });
    expect(t.claimRun("r1", "alice")).toEqual({ kind: "ok", route: "local" });
  });

  it("keeps the first decision", () => {
    const t = new RouteTable({ ttlMs: 60_000 });
    t.decide("r1", "alice", "upstream");
    expect(t.decide("r1", "alice", "local")).toEqual({ kind: "ok", route: "upstream" });
  });

  it("wakes waiters when the route is decided, and times out otherwise", async () => {
    const t = new RouteTable({ ttlMs: 60_000 });
    t.claimRun("r1", "alice");
    const waiting = t.waitForRoute("r1", 5_000);
    t.decide("r1", "alice", "local");
    await expect(waiting).resolves.toEqual({ kind: "decided", route: "local" });

    t.claimRun("r2", "alice");
    await expect(t.waitForRoute("r2", 20)).resolves.toEqual({ kind: "timeout" });

    const abort = new AbortController();
    const aborted = t.waitForRoute("r2", 5_000, abort.signal);
    abort.abort();
    await expect(aborted).resolves.toEqual({ kind: "aborted" });
  });

  it("binds conversations to their first member", () => {
    const t = new RouteTable({ ttlMs: 60_000 });
    expect(t.claimConversation("c1", "alice")).toBe(true);
    expect(t.claimConversation("c1", "alice")).toBe(true);
    expect(t.claimConversation("c1", "bob")).toBe(false);
  });

  it("forgets idle entries after the TTL but never a run someone waits for", async () => {
    let now = 1_000;
    const t = new RouteTable({ ttlMs: 100, now: () => now });
    t.claimRun("idle", "alice");
    t.claimConversation("c1", "alice");
    t.claimRun("waited", "alice");
    const waiting = t.waitForRoute("waited", 5_000);
    now += 500;
    expect(t.claimRun("idle", "bob")).toEqual({ kind: "ok", route: undefined });
    expect(t.claimConversation("c1", "bob")).toBe(true);
    expect(t.claimRun("waited", "bob")).toEqual({ kind: "forbidden" });
    t.decide("waited", "alice", "upstream");
    await expect(waiting).resolves.toEqual({ kind: "decided", route: "upstream" });
  });

  it("stays bounded", () => {
    const t = new RouteTable({ ttlMs: 60_000, maxEntries: 3 });
    for (let i = 0; i < 10; i++) t.claimRun(`r${i}`, "alice");
    expect(t.size.runs).toBe(3);
    expect(t.runMember("r9")).toBe("alice");
    expect(t.runMember("r0")).toBeUndefined();
  });

  it("learns another proxy's decision with its member: waiters wake, a waiter of another member is refused", async () => {
    const t = new RouteTable({ ttlMs: 60_000 });
    t.claimRun("r1", "mallory");
    const waiting = t.waitForRoute("r1", 5_000);
    t.learn("r1", "alice", "local");
    await expect(waiting).resolves.toEqual({ kind: "decided", route: "local" });
    expect(t.claimRun("r1", "mallory")).toEqual({ kind: "forbidden" });
    expect(t.decision("r1")).toEqual({ memberId: "alice", route: "local" });
    // A route this proxy decided itself stays.
    t.decide("r2", "alice", "upstream");
    t.learn("r2", "bob", "local");
    expect(t.decision("r2")).toEqual({ memberId: "alice", route: "upstream" });
    expect(t.decision("unknown")).toBeUndefined();
  });
});
