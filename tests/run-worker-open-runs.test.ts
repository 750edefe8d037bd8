/**
 * One run worker holds hundreds of open runs at once (issue 15, "open runs at
 * once"): 500 runs each make a model call that asks for a tool and then wait
 * for its result, all parked on the same worker at the same time; once every
 * one waits, the results arrive and every run completes, each result stored
 * exactly once. The stack is in tests/run-worker-support.ts; the worker runs
 * with its default MAX_CONCURRENT_RUNS.
 */
import { afterEach, describe, expect, it } from "vitest";
import { RunStatus, type ExecuteToolRound } from "@byok/contracts";
import { waitFor } from "@byok/test-support/infra";
import type { ObservedRun } from "./run-client-double.ts";
import { endedRecord, prepared, startStack, stopStacks, textAnswer, toolCalls } from "./run-worker-support.ts";

afterEach(stopStacks);

const RUNS = 500;

describe("run worker: open runs at once", () => {
  it(`holds ${RUNS} runs waiting for tool results on one worker, and all of them complete`, { timeout: 300_000 }, async () => {
    const stack = await startStack();
    const worker = stack.workers[0]!;
    for (let i = 0; i < RUNS; i++) {
      stack.llm.enqueue({ kind: "chunks", endpoint: "openai-chat", chunks: toolCalls("Reading.", [{ id: `call_${i}`, name: "Read", args: '{"path":"a.txt"}' }]) });
    }
    for (let i = 0; i < RUNS; i++) stack.llm.enqueue({ kind: "chunks", endpoint: "openai-chat", chunks: textAnswer("Done.") });

    const parked = new Map<string, ExecuteToolRound>();
    const runs: ObservedRun[] = [];
    for (let i = 0; i < RUNS; i++) {
      const runId = `open-run-${i}`;
      runs.push(
        await stack.client.start(prepared(runId, `conv-open-${i}`, `read a.txt (${i})`), {
          // Park: the results are sent only once every run waits for one.
          execute: (round) => {
            parked.set(runId, round);
            return undefined;
          },
        }),
      );
    }
    let peak = 0;
    await waitFor(
      () => {
        peak = Math.max(peak, worker.activeRuns());
        return parked.size === RUNS;
      },
      `${RUNS} runs waiting for their tool results`,
      240_000,
    );
    peak = Math.max(peak, worker.activeRuns());
    expect(peak).toBe(RUNS);
    expect(stack.llm.requestsTo("openai-chat")).toHaveLength(RUNS);

    await Promise.all(
      runs.map(async (run) => {
        const round = parked.get(run.runId)!;
        for (const call of round.calls) await run.sendToolResult(call.callId, `contents for ${call.callId}`);
      }),
    );
    const terminals = await Promise.all(runs.map((run) => run.terminal));
    // What a run that did not complete ended with (its failure's kind and message), so that a failure says why.
    const notCompleted = terminals.filter((t) => t.outcome.case !== "completed").map((t) => JSON.stringify(t.outcome, (_key, value: unknown) => (typeof value === "bigint" ? String(value) : value)));
    expect(notCompleted).toEqual([]);

    // Each run: user, assistant with the call, its one result, the final answer.
    for (const run of runs.slice(0, 50)) {
      const record = await endedRecord(stack, run.runId);
      expect(record.status).toBe(RunStatus.COMPLETED);
      const history = await stack.history(record.headRevisionId);
      expect(history.map((m) => m.body.case)).toEqual(["user", "assistant", "toolResult", "assistant"]);
    }
    await waitFor(() => worker.activeRuns() === 0, "the worker to settle every run", 30_000);
  });
});
