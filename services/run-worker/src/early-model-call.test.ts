import { create } from "@bufbuild/protobuf";
import { MessageSchema, PreparedRunSchema, parseRunId, type ModelRequest, type PreparedRun } from "@byok/contracts";
import { silentLogger } from "@byok/platform";
import { describe, expect, it } from "vitest";
import { EarlyCallSlot, knownStartHistory, type EarlyCallInputs } from "./early-model-call.ts";
import type { ForwardedEvent } from "./model-cycle.ts";
import type { InvocationOutcome } from "./model-invocation.ts";
import { buildModelRequest, runModelContext } from "./model-request.ts";
import { RecentHistories } from "./recent-histories.ts";

const runId = parseRunId("run-early-unit");

function userMessage(text: string) {
  return create(MessageSchema, { body: { case: "user", value: { content: [{ part: { case: "text", value: { text } } }] } } });
}

function preparedRun(baseRevisionId = ""): PreparedRun {
  return create(PreparedRunSchema, {
    runId,
    conversationId: "conv-1",
    memberId: "member-1",
    model: { modelId: "m" },
    baseRevisionId,
    action: { case: "start", value: { initialMessages: [userMessage("hi")] } },
  });
}

/** An invoker whose one call the test drives: events pushed by hand, the outcome resolved by hand. */
function drivenInvoker() {
  const calls: Array<{ request: ModelRequest; forward: (event: ForwardedEvent) => void; signal: AbortSignal; end: (outcome: InvocationOutcome) => void }> = [];
  return {
    calls,
    invoke(request: ModelRequest, forward: (event: ForwardedEvent) => void, signal: AbortSignal): Promise<InvocationOutcome> {
      return new Promise((end) => calls.push({ request, forward, signal, end }));
    },
  };
}

function inputs(invoker: ReturnType<typeof drivenInvoker>, claim: () => Promise<boolean>, seen: string[] = [], recent = new RecentHistories()): EarlyCallInputs {
  return { invoker, recent, observer: { earlyModelCall: (outcome) => seen.push(outcome) }, log: silentLogger(), claim };
}

/** The claims in these tests answer at once: their callbacks have run after one pass of the event loop. */
const claimAnswered = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** A first take of a new conversation whose early call went out (the claim answered). */
async function sentEarlyCall() {
  const invoker = drivenInvoker();
  const seen: string[] = [];
  const prepared = preparedRun();
  const slot = new EarlyCallSlot(inputs(invoker, () => Promise.resolve(true), seen), { run: runModelContext(runId, prepared), prepared, deliveryCount: 1, runSignal: new AbortController().signal });
  await claimAnswered();
  return { invoker, seen, prepared, slot };
}

const text = (value: string): ForwardedEvent => ({ case: "textDelta", value: { text: value } }) as ForwardedEvent;

describe("early model call", () => {
  it("holds what the call streams until it is adopted, then forwards it in order and the rest as it comes", async () => {
    const { invoker, seen, prepared, slot } = await sentEarlyCall();
    expect(invoker.calls).toHaveLength(1);
    const call = invoker.calls[0]!;
    call.forward(text("a"));
    call.forward(text("b"));

    const early = slot.take();
    expect(early?.matches(buildModelRequest(runModelContext(runId, prepared), [userMessage("hi")], early.index))).toBe(true);
    expect(early?.matches(buildModelRequest(runModelContext(runId, prepared), [userMessage("other")], early.index))).toBe(false);
    const forwarded: ForwardedEvent[] = [];
    const outcome = early!.adopt((event) => forwarded.push(event));
    call.forward(text("c"));
    call.end({ kind: "cancelled" });
    expect(await outcome).toEqual({ kind: "cancelled" });
    expect(forwarded.map((e) => (e.case === "textDelta" ? e.value.text : ""))).toEqual(["a", "b", "c"]);
    expect(seen).toEqual(["adopted"]);
    expect(call.signal.aborted).toBe(false);
  });

  it("cancels a discarded call and forwards nothing of it", async () => {
    const { invoker, seen, slot } = await sentEarlyCall();
    invoker.calls[0]!.forward(text("never"));
    slot.close();
    expect(invoker.calls[0]!.signal.aborted).toBe(true);
    expect(seen).toEqual(["not_reached"]);
  });

  it("sends nothing when the run is not the first take, or when run.begin answered before the claim did", async () => {
    const invoker = drivenInvoker();
    const prepared = preparedRun();
    const context = runModelContext(runId, prepared);
    const signal = new AbortController().signal;
    const taken = new EarlyCallSlot(inputs(invoker, () => Promise.resolve(false)), { run: context, prepared, deliveryCount: 1, runSignal: signal });
    let answerClaim: (first: boolean) => void = () => undefined;
    const late = new EarlyCallSlot(inputs(invoker, () => new Promise((resolve) => (answerClaim = resolve))), { run: context, prepared, deliveryCount: 1, runSignal: signal });
    expect(late.take()).toBeUndefined();
    answerClaim(true);
    const redelivered = new EarlyCallSlot(inputs(invoker, () => Promise.resolve(true)), { run: context, prepared, deliveryCount: 2, runSignal: signal });
    await claimAnswered();
    expect(taken.take()).toBeUndefined();
    expect(redelivered.take()).toBeUndefined();
    expect(invoker.calls).toHaveLength(0);
  });

  it("knows the start history of a new conversation and of one whose base revision this worker held last", () => {
    const recent = new RecentHistories();
    expect(knownStartHistory(preparedRun(), recent)?.length).toBe(1);
    expect(knownStartHistory(preparedRun("rev-1"), recent)).toBeUndefined();
    const before = [userMessage("one"), userMessage("two")];
    recent.set("conv-1", { revisionId: "rev-1", history: { messages: before, messageIds: ["m1", "m2"], compaction: undefined, anchor: undefined } });
    expect(knownStartHistory(preparedRun("rev-1"), recent)?.length).toBe(3);
    expect(knownStartHistory(preparedRun("rev-0"), recent)).toBeUndefined();
  });
});
