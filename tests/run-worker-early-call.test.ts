/**
 * The early first model call (services/run-worker/src/early-model-call.ts): a
 * run whose starting history the worker knows sends its first model call while
 * run.begin is still in the store, holds what it streams until the begin
 * committed, and uses it only when the request is exactly the one the run
 * makes then; otherwise the call is cancelled unseen. run.begin is kept waiting
 * by a row lock on the conversation, taken here in a second Postgres session.
 * (EARLY_MODEL_CALL is off by default: the runs here turn it on.)
 */
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { FailureKind, RunStatus } from "@byok/contracts";
import { waitFor } from "@byok/test-support/infra";
import { endedRecord, prepared, startStack, stopStacks, textAnswer, type Stack } from "./run-worker-support.ts";

/** Locks still held when a test ends (a failed one): released before the stacks stop. */
const heldLocks = new Set<() => Promise<void>>();

afterEach(async () => {
  for (const release of [...heldLocks]) await release();
  await stopStacks();
});

/** Holds the conversation's row lock (run.begin of the conversation waits for it) until released. */
async function lockConversation(stack: Stack, conversationId: string): Promise<{ release(): Promise<void> }> {
  const client = new pg.Client({ connectionString: stack.databaseUrl });
  await client.connect();
  await client.query("BEGIN");
  const locked = await client.query("SELECT id FROM conversations WHERE id = $1 FOR UPDATE", [conversationId]);
  expect(locked.rowCount).toBe(1);
  const release = async (): Promise<void> => {
    if (!heldLocks.delete(release)) return;
    await client.query("COMMIT");
    await client.end();
  };
  heldLocks.add(release);
  return { release };
}

function streamedText(events: readonly { event: { case: string | undefined; value?: unknown } }[]): string {
  return events.map((e) => (e.event.case === "textDelta" ? (e.event.value as { text: string }).text : "")).join("");
}

describe("run worker: the early first model call", () => {
  it("sends the next turn's model call while run.begin waits, and forwards nothing of it before the begin committed", async () => {
    const stack = await startStack({ workerEnv: { EARLY_MODEL_CALL: "true" } });
    stack.llm.enqueue({ kind: "chunks", endpoint: "openai-chat", chunks: textAnswer("First answer.") });
    const first = await stack.client.start(prepared("run-early-1", "conv-early", "hello"));
    expect((await first.terminal).outcome.case).toBe("completed");
    const head = (await endedRecord(stack, "run-early-1")).headRevisionId;

    const lock = await lockConversation(stack, "conv-early");
    stack.llm.enqueue({ kind: "chunks", endpoint: "openai-chat", chunks: textAnswer("Second answer.") });
    const second = await stack.client.start(prepared("run-early-2", "conv-early", "again", { baseRevisionId: head }));
    // The worker held this conversation's history: the call goes out, and ends, while run.begin waits on the lock.
    await waitFor(() => stack.llm.requests.length === 2, "the second turn's upstream request while run.begin waits");
    await waitFor(() => stack.gatewayInFlight() === 0, "the gateway to have sent the whole answer");
    expect(second.events).toEqual([]);
    expect(second.states).toEqual([]);
    await lock.release();

    expect((await second.terminal).outcome.case).toBe("completed");
    expect(streamedText(second.events)).toBe("Second answer.");
    expect(second.events.every((e) => e.modelCallIndex === 0)).toBe(true);
    // Adopted, not asked again: one upstream request per turn, and the second one carried the whole history.
    expect(stack.llm.requests).toHaveLength(2);
    const messages = (stack.llm.requests[1]?.body as { messages: Array<{ role: string }> }).messages;
    expect(messages.map((m) => m.role)).toEqual(["system", "user", "assistant", "user"]);
    const record = await endedRecord(stack, "run-early-2");
    expect(record.status).toBe(RunStatus.COMPLETED);
    expect(record.providerCallIndex).toBe(1);
  });

  it("cancels the early call unseen when run.begin refuses the run", async () => {
    const stack = await startStack({ workerEnv: { EARLY_MODEL_CALL: "true" } });
    stack.llm.enqueue({ kind: "chunks", endpoint: "openai-chat", chunks: textAnswer("Owner's answer.") });
    const owner = await stack.client.start(prepared("run-owner", "conv-owned", "mine"));
    expect((await owner.terminal).outcome.case).toBe("completed");

    // Another member names the same conversation as a new one: the worker knows that history (its own
    // message only) and calls early; the store refuses the begin once the lock is gone.
    const lock = await lockConversation(stack, "conv-owned");
    stack.llm.enqueue({ kind: "chunks", endpoint: "openai-chat", chunks: textAnswer("Nobody may see this.") });
    const intruder = await stack.client.start({ ...prepared("run-intruder", "conv-owned", "theirs"), memberId: "member-2" });
    await waitFor(() => stack.llm.requests.length === 2, "the early upstream request");
    await waitFor(() => stack.gatewayInFlight() === 0, "the gateway to have sent the whole answer");
    await lock.release();

    const terminal = await intruder.terminal;
    expect(terminal.outcome.case).toBe("failed");
    if (terminal.outcome.case === "failed") expect(terminal.outcome.value.kind).toBe(FailureKind.STORE);
    expect(streamedText(intruder.events)).toBe("");
    expect(intruder.events.filter((e) => e.event.case === "textDelta" || e.event.case === "responseComplete")).toEqual([]);
    // The early request held nothing of the owner's conversation.
    const sent = JSON.stringify(stack.llm.requests[1]?.body);
    expect(sent).toContain("theirs");
    expect(sent).not.toContain("mine");
  });

  it("drops the early call when the stored history differs from the one assumed, and calls again under the next call index", async () => {
    const stack = await startStack({ workerEnv: { EARLY_MODEL_CALL: "true" } });
    // The store keeps no NUL characters: the stored message differs from the one the early call sent.
    // The two calls may reach the mock in either order: both get the same answer; the call index tells them apart.
    stack.llm.enqueue({ kind: "chunks", endpoint: "openai-chat", chunks: textAnswer("The real answer.") });
    stack.llm.enqueue({ kind: "chunks", endpoint: "openai-chat", chunks: textAnswer("The real answer.") });
    const run = await stack.client.start(prepared("run-differs", "conv-differs", "a\u0000b"));
    expect((await run.terminal).outcome.case).toBe("completed");
    expect(streamedText(run.events)).toBe("The real answer.");
    // Nothing of the dropped call (client index 0) reached the client, and its index is not used
    // again: the run's call is its second index (client index 1).
    expect(run.events.every((e) => e.modelCallIndex === 1)).toBe(true);
    // The early call may have been cancelled before the gateway sent it upstream.
    expect(stack.llm.requests.length).toBeGreaterThanOrEqual(1);
    const record = await endedRecord(stack, "run-differs");
    expect(record.providerCallIndex).toBe(2);
  });
});
