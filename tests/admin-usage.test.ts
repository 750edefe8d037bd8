/**
 * `npm run admin -- usage` against the real store (Postgres over NATS): the runs'
 * provider-reported usage, per member, as the admin reads it.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { busNames, RunStatus } from "@byok/contracts";
import { StoreClient } from "@byok/store-client";
import type { AdminStore } from "../services/admin/src/actions/admin-actions.ts";
import { runAdmin, type AdminRun } from "../services/admin/src/testing/admin-cli.ts";
import { startTestStore, userText, type TestStore } from "../services/store/src/store-test-harness.ts";

describe("admin usage report with the store", () => {
  let store: TestStore;
  let members: AdminStore;
  beforeEach(async () => {
    store = await startTestStore();
    members = new StoreClient(store.nc, busNames(store.busPrefix), { timeoutMs: 10_000 });
  });
  afterEach(() => store.close());

  function admin(...args: string[]): Promise<AdminRun> {
    return runAdmin(members, args);
  }

  async function finishedRun(runId: string, memberId: string, status: RunStatus, usage?: { inputTokens?: bigint; outputTokens?: bigint }) {
    expect((await store.call("beginRun", { runId, conversationId: `c-${runId}`, memberId, initialMessages: [userText("q")] })).error).toBeUndefined();
    expect((await store.call("finishRun", { runId, status, ...(usage ? { usage } : {}) })).error).toBeUndefined();
  }

  /** The report's cells for one member's line. */
  function line(out: string, memberId: string): string[] | undefined {
    return out
      .split("\n")
      .find((l) => l.startsWith(`${memberId} `))
      ?.trim()
      .split(/\s{2,}/);
  }

  it("prints each member's runs and token sums, marking sums that cover only some runs", async () => {
    const created = await admin("create", "alice");
    const aliceId = /member (\S+) \(/.exec(created.out)?.[1] ?? "";
    await finishedRun("r1", aliceId, RunStatus.COMPLETED, { inputTokens: 1200n, outputTokens: 80n });
    await finishedRun("r2", aliceId, RunStatus.FAILED);
    await finishedRun("r3", aliceId, RunStatus.COMPLETED, { inputTokens: 800n });
    await finishedRun("r4", "local", RunStatus.CANCELLED);
    // The ledger has r1's call with its cost, and r2's with an unknown one.
    for (const [i, runId, costUsd] of [[1, "r1", "0.0042"], [2, "r2", undefined]] as const) {
      const settled = await store.call("settleCall", {
        ticketId: `00000000-0000-4000-8000-00000000000${i}`,
        entry: {
          callRef: `run:${runId}:1`,
          memberId: aliceId,
          clientKind: "cursor",
          modelId: "m",
          providerId: "p",
          upstreamModel: "u",
          runId,
          callIndex: 1,
          startedAt: new Date().toISOString(),
          ...(costUsd === undefined ? {} : { costUsd, chargedUsd: costUsd }),
        },
      });
      expect(settled.error).toBeUndefined();
    }

    const all = await admin("usage");
    expect(all.code).toBe(0);
    expect(line(all.out, aliceId)).toEqual([aliceId, "alice", "3", "0", "2", "1", "0", "2,000 (2/3)", "80 (1/3)", "-", "-", "-", "$0.0042 +1 unknown"]);
    expect(line(all.out, "local")).toEqual(["local", "-", "1", "0", "0", "0", "1", "-", "-", "-", "-", "-", "-"]);

    const onlyLocal = await admin("usage", "--member", "local");
    expect(line(onlyLocal.out, aliceId)).toBeUndefined();
    expect(line(onlyLocal.out, "local")).toBeDefined();

    const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
    expect((await admin("usage", "--since", tomorrow)).out).toBe("no runs\n");
    expect(line((await admin("usage", "--until", tomorrow)).out, aliceId)?.[2]).toBe("3");

    const bad = await admin("usage", "--since", "last week");
    expect(bad.code).toBe(1);
    expect(bad.err).toMatch(/since is not an RFC 3339 timestamp/);
  });
});
