import type { MessageInitShape } from "@bufbuild/protobuf";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { RunStatus, StoreErrorKind, type MemberUsage, type UsageSchema } from "@byok/contracts";
import { startTestStore, userText, type TestStore } from "./store-test-harness.ts";

type UsageInit = MessageInitShape<typeof UsageSchema>;

describe("member.usage", () => {
  let store: TestStore;
  beforeEach(async () => {
    store = await startTestStore();
  });
  afterEach(() => store.close());

  /** A run in its own conversation; finished with `status` (and the usage the provider reported) unless still running. */
  async function run(runId: string, memberId: string, status: RunStatus, usage?: UsageInit): Promise<void> {
    const begun = await store.call("beginRun", { runId, conversationId: `c-${runId}`, memberId, initialMessages: [userText("question")] });
    expect(begun.error).toBeUndefined();
    if (status === RunStatus.RUNNING) return;
    const finished = await store.call("finishRun", { runId, status, ...(usage ? { usage } : {}) });
    expect(finished.error).toBeUndefined();
  }

  /** The database clock now, with microseconds, as RFC 3339 (runs are stamped by the same clock). */
  async function databaseNow(): Promise<string> {
    const result = await store.sql(`SELECT to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS now`);
    return result.rows[0].now as string;
  }

  async function usage(request: { memberId?: string; since?: string; until?: string }): Promise<MemberUsage[]> {
    const response = await store.call("memberUsage", request);
    expect(response.error).toBeUndefined();
    return response.members;
  }

  /** Three batches of runs for Ada (a member record) and "local" (none), with the database time between batches. */
  async function seed(): Promise<{ adaId: string; afterFirst: string; afterSecond: string }> {
    const ada = await store.call("createMember", { name: "Ada" });
    const adaId = ada.member!.memberId;
    await run("a1", adaId, RunStatus.COMPLETED, { inputTokens: 100n, outputTokens: 20n, cacheReadTokens: 50n });
    await run("l1", "local", RunStatus.CANCELLED, { inputTokens: 7n });
    const afterFirst = await databaseNow();
    // The provider reported no cache fields for a2, and reasoning as an explicit 0.
    await run("a2", adaId, RunStatus.COMPLETED, { inputTokens: 200n, outputTokens: 30n, reasoningTokens: 0n });
    await run("a3", adaId, RunStatus.FAILED);
    await run("l2", "local", RunStatus.COMPLETED);
    const afterSecond = await databaseNow();
    await run("a4", adaId, RunStatus.RUNNING);
    return { adaId, afterFirst, afterSecond };
  }

  it("sums each token field over the runs that reported it, and leaves a field no run reported unknown", async () => {
    const { adaId } = await seed();
    const rows = await usage({});
    const ada = rows.find((r) => r.memberId === adaId);
    const local = rows.find((r) => r.memberId === "local");
    expect(rows).toHaveLength(2);

    expect(ada).toMatchObject({ name: "Ada", runs: 4, completed: 2, failed: 1, cancelled: 0 });
    expect(ada).toMatchObject({ inputTokens: 300n, inputTokensRuns: 2, outputTokens: 50n, outputTokensRuns: 2 });
    expect(ada).toMatchObject({ cacheReadTokens: 50n, cacheReadTokensRuns: 1, reasoningTokens: 0n, reasoningTokensRuns: 1 });
    expect(ada!.cacheWriteTokens).toBeUndefined();
    expect(ada!.cacheWriteTokensRuns).toBe(0);

    expect(local).toMatchObject({ name: "", runs: 2, completed: 1, failed: 0, cancelled: 1, inputTokens: 7n, inputTokensRuns: 1 });
    for (const field of ["outputTokens", "cacheReadTokens", "cacheWriteTokens", "reasoningTokens"] as const) {
      expect(local![field], field).toBeUndefined();
      expect(local![`${field}Runs`], field).toBe(0);
    }
  });

  it("filters by member", async () => {
    const { adaId } = await seed();
    expect((await usage({ memberId: "local" })).map((r) => [r.memberId, r.runs])).toEqual([["local", 2]]);
    expect((await usage({ memberId: adaId })).map((r) => [r.memberId, r.runs])).toEqual([[adaId, 4]]);
    expect(await usage({ memberId: "nobody" })).toEqual([]);
  });

  it("counts the runs that began in [since, until)", async () => {
    const { adaId, afterFirst, afterSecond } = await seed();
    const runs = (rows: MemberUsage[]) => Object.fromEntries(rows.map((r) => [r.memberId === adaId ? "ada" : r.memberId, r.runs]));

    expect(runs(await usage({ until: afterFirst }))).toEqual({ ada: 1, local: 1 });
    const second = await usage({ since: afterFirst, until: afterSecond });
    expect(runs(second)).toEqual({ ada: 2, local: 1 });
    // Only a2 reported usage among the second batch's runs.
    expect(second.find((r) => r.memberId === adaId)).toMatchObject({ inputTokens: 200n, inputTokensRuns: 1, completed: 1, failed: 1 });
    const local = second.find((r) => r.memberId === "local");
    expect(local).toMatchObject({ completed: 1, inputTokensRuns: 0 });
    expect(local!.inputTokens).toBeUndefined();
    expect(runs(await usage({ since: afterSecond }))).toEqual({ ada: 1 });
    expect(runs(await usage({ memberId: "local", since: afterFirst }))).toEqual({ local: 1 });
    // The same instant with another UTC offset selects the same runs.
    const shifted = new Date(Date.parse(afterSecond) + 2 * 3_600_000).toISOString().replace(/\.\d+Z$/, `.${afterSecond.slice(20, 26)}+02:00`);
    expect(runs(await usage({ since: shifted }))).toEqual({ ada: 1 });
  });

  it("rejects timestamps that are not RFC 3339, and a range that ends before it starts", async () => {
    await seed();
    for (const request of [
      { since: "yesterday" },
      { since: "2026-01-01" },
      { until: "2026-13-01T00:00:00Z" },
      { until: "2026-02-29T00:00:00Z" },
      { since: "2026-01-01T10:00:00" },
      { since: "2026-01-02T00:00:00Z", until: "2026-01-01T00:00:00Z" },
    ]) {
      const response = await store.call("memberUsage", request);
      expect(response.error?.kind, JSON.stringify(request)).toBe(StoreErrorKind.INVALID);
      expect(response.members).toEqual([]);
    }
  });
});
