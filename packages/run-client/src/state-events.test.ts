import { describe, expect, it } from "vitest";
import { create } from "@bufbuild/protobuf";
import { CommitCause, StateEventSchema, type StateCommitted, type StateEvent } from "@byok/contracts";
import type { StateAckInit } from "./run-bus.ts";
import { STREAM_CLOSED, StateEventRouter } from "./state-events.ts";

function commit(cause: CommitCause, roundId: string, revisionId: string): StateEvent {
  return create(StateEventSchema, { event: { case: "stateCommitted", value: { cause, roundId, revisionId } } });
}
const probe = create(StateEventSchema, { event: { case: "probe", value: {} } });
const completed = create(StateEventSchema, { event: { case: "terminal", value: { outcome: { case: "completed", value: {} } } } });

function deferred<T>(): { promise: Promise<T>; resolve(value: T): void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

describe("state event router", () => {
  it("projects a repeated commit once and answers the repeat with the first answer", async () => {
    const projected: StateCommitted[] = [];
    const router = new StateEventRouter({
      ended: () => false,
      commit: async (c) => (projected.push(c), { ok: true }),
      execute: () => undefined,
      terminal: () => undefined,
    });
    const staged = commit(CommitCause.TOOL_ROUND_STAGED, "r:round:1", "rev-1");
    expect(await router.handle(staged)).toEqual({ ok: true });
    expect(await router.handle(staged)).toEqual({ ok: true });
    // Same round and revision, another cause: a different commit.
    expect(await router.handle(commit(CommitCause.TOOL_ROUND_SETTLED, "r:round:1", "rev-1"))).toEqual({ ok: true });
    expect(projected.map((c) => c.cause)).toEqual([CommitCause.TOOL_ROUND_STAGED, CommitCause.TOOL_ROUND_SETTLED]);
  });

  it("tries a commit again after a failed projection", async () => {
    let attempts = 0;
    const router = new StateEventRouter({
      ended: () => false,
      commit: async () => (++attempts === 1 ? { ok: false, error: "blob not acked" } : { ok: true }),
      execute: () => undefined,
      terminal: () => undefined,
    });
    const final = commit(CommitCause.FINAL_ANSWER, "", "rev-2");
    expect(await router.handle(final)).toEqual({ ok: false, error: "blob not acked" });
    expect(await router.handle(final)).toEqual({ ok: true });
    expect(attempts).toBe(2);
  });

  it("answers a probe while a commit is still being projected, and keeps the other events in order", async () => {
    const gate = deferred<StateAckInit>();
    const seen: string[] = [];
    const router = new StateEventRouter({
      ended: () => false,
      commit: async () => (seen.push("commit"), gate.promise),
      execute: () => void seen.push("execute"),
      terminal: () => void seen.push("terminal"),
    });
    const committing = router.handle(commit(CommitCause.FINAL_ANSWER, "", "rev-3"));
    const terminal = router.handle(completed);
    expect(await router.handle(probe)).toEqual({ ok: true });
    expect(seen).toEqual(["commit"]);
    gate.resolve({ ok: true });
    await Promise.all([committing, terminal]);
    expect(seen).toEqual(["commit", "terminal"]);
  });

  it("hands over one terminal and refuses commits and rounds once the stream ended", async () => {
    let ended = false;
    const terminals: string[] = [];
    const router = new StateEventRouter({
      ended: () => ended,
      commit: async () => ({ ok: true }),
      execute: () => undefined,
      terminal: (outcome) => {
        terminals.push(outcome.case ?? "none");
        ended = true;
      },
    });
    expect(await router.handle(completed)).toEqual({ ok: true });
    expect(await router.handle(completed)).toEqual({ ok: true });
    expect(terminals).toEqual(["completed"]);
    expect(await router.handle(probe)).toEqual(STREAM_CLOSED);
    expect(await router.handle(commit(CommitCause.FINAL_ANSWER, "", "rev-4"))).toEqual(STREAM_CLOSED);
    const round = create(StateEventSchema, { event: { case: "executeToolRound", value: { roundId: "r:round:1", calls: [] } } });
    expect(await router.handle(round)).toEqual(STREAM_CLOSED);
  });
});
