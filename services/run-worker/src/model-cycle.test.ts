import { describe, expect, it } from "vitest";
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { ModelEventSchema, ModelFailureKind, StopReason, type ModelEvent } from "@byok/contracts";
import { ModelCycle, type CycleOutcome, type CycleStep } from "./model-cycle.ts";

type EventInit = NonNullable<MessageInitShape<typeof ModelEventSchema>["event"]>;

function event(init: EventInit): ModelEvent {
  return create(ModelEventSchema, { event: init });
}

const start = (): ModelEvent => event({ case: "start", value: { providerKind: "openai-chat", routeId: "m", upstreamModel: "u" } });
const textStart = (index: number) => event({ case: "textStart", value: { index } });
const textDelta = (index: number, text: string) => event({ case: "textDelta", value: { index, text } });
const textEnd = (index: number) => event({ case: "textEnd", value: { index } });
const thinkingStart = (index: number) => event({ case: "thinkingStart", value: { index } });
const thinkingDelta = (index: number, text: string) => event({ case: "thinkingDelta", value: { index, text } });
const thinkingEnd = (index: number) => event({ case: "thinkingEnd", value: { index } });
const toolStart = (index: number, callId: string, name = "Read") => event({ case: "toolCallStart", value: { index, callId, name } });
const toolArgs = (index: number, delta: string) => event({ case: "toolCallArgsDelta", value: { index, delta } });
const toolEnd = (index: number, argumentsJson: string) => event({ case: "toolCallEnd", value: { index, argumentsJson } });
const usage = (input: bigint, output: bigint) => event({ case: "usage", value: { inputTokens: input, outputTokens: output } });
const replay = () => event({ case: "replay", value: { providerKind: "anthropic", routeId: "m", data: new Uint8Array([1, 2, 3]) } });
const done = (reason: StopReason) => event({ case: "done", value: { reason } });
const keepalive = () => event({ case: "keepalive", value: {} });
const failure = (kind: ModelFailureKind, message: string, partialText = "") =>
  event({ case: "failure", value: { kind, message, partialText, retryable: kind === ModelFailureKind.RATE_LIMITED } });

/** Feeds events until the cycle ends; returns every step and the outcome (undefined if it never ended). */
function run(events: ModelEvent[]): { steps: CycleStep[]; outcome: CycleOutcome | undefined } {
  const cycle = new ModelCycle();
  const steps: CycleStep[] = [];
  for (const e of events) {
    const step = cycle.push(e);
    steps.push(step);
    if (step.kind === "ended") break;
  }
  return { steps, outcome: cycle.outcome };
}

function expectViolation(events: ModelEvent[], pattern: RegExp): void {
  const { outcome } = run(events);
  expect(outcome?.kind).toBe("failed");
  if (outcome?.kind !== "failed") return;
  expect(outcome.failure.origin).toBe("protocol");
  expect(outcome.failure.kind).toBe(ModelFailureKind.PROTOCOL);
  expect(outcome.failure.message).toMatch(pattern);
}

describe("ModelCycle: well-formed streams", () => {
  it("builds the assistant message from a text answer and keeps usage", () => {
    const { outcome } = run([start(), keepalive(), textStart(0), textDelta(0, "Hel"), textDelta(0, "lo"), textEnd(0), usage(10n, 2n), done(StopReason.STOP)]);
    expect(outcome?.kind).toBe("completed");
    if (outcome?.kind !== "completed") return;
    expect(outcome.stop).toBe("stop");
    expect(outcome.assistant.content.map((p) => p.part)).toEqual([{ case: "text", value: expect.objectContaining({ text: "Hello" }) }]);
    expect(outcome.usage?.inputTokens).toBe(10n);
    expect(outcome.usage?.outputTokens).toBe(2n);
    expect(outcome.assistant.replay).toBeUndefined();
  });

  it("orders reasoning, text and tool calls by block index and attaches the replay state", () => {
    const { outcome } = run([
      start(),
      thinkingStart(0),
      thinkingDelta(0, "let me look"),
      thinkingEnd(0),
      textStart(1),
      textDelta(1, "Reading both."),
      textEnd(1),
      toolStart(2, "call_a", "Read"),
      toolStart(3, "call_b\nwith newline", "Grep"),
      toolArgs(3, '{"pattern":'),
      toolArgs(2, '{"path":"a"}'),
      toolArgs(3, '"x"}'),
      toolEnd(3, '{"pattern":"x"}'),
      toolEnd(2, '{"path":"a"}'),
      replay(),
      done(StopReason.TOOL_USE),
    ]);
    expect(outcome?.kind).toBe("completed");
    if (outcome?.kind !== "completed") return;
    expect(outcome.stop).toBe("tool_use");
    const parts = outcome.assistant.content.map((p) => p.part);
    expect(parts.map((p) => p.case)).toEqual(["reasoning", "text", "toolCall", "toolCall"]);
    expect(outcome.toolCalls.map((c) => [c.callId, c.name, c.argumentsJson])).toEqual([
      ["call_a", "Read", '{"path":"a"}'],
      ["call_b\nwith newline", "Grep", '{"pattern":"x"}'],
    ]);
    expect(outcome.assistant.replay?.data).toEqual(new Uint8Array([1, 2, 3]));
    expect(outcome.usage).toBeUndefined();
  });

  it("forwards UI events and usage but not start, keepalive or replay", () => {
    const { steps } = run([start(), keepalive(), textStart(0), textDelta(0, "a"), textEnd(0), replay(), usage(1n, 1n), done(StopReason.STOP)]);
    const forwarded = steps.flatMap((s) => (s.kind === "accepted" && s.forward ? [s.forward.case] : []));
    expect(forwarded).toEqual(["textStart", "textDelta", "textEnd", "usage"]);
  });

  it("drops empty text and thinking blocks from the message", () => {
    const { outcome } = run([start(), thinkingStart(0), thinkingEnd(0), textStart(1), textDelta(1, "ok"), textEnd(1), done(StopReason.STOP)]);
    expect(outcome?.kind === "completed" && outcome.assistant.content.map((p) => p.part.case)).toEqual(["text"]);
  });

  it("accepts a stop without any content (the model said nothing)", () => {
    const { outcome } = run([start(), done(StopReason.STOP)]);
    expect(outcome?.kind === "completed" && outcome.assistant.content).toEqual([]);
  });
});

describe("ModelCycle: provider failures", () => {
  it("reports a provider failure with the partial output for diagnostics", () => {
    const { outcome } = run([start(), textStart(0), textDelta(0, "half an ans"), failure(ModelFailureKind.TRUNCATED, "stream ended early")]);
    expect(outcome?.kind).toBe("failed");
    if (outcome?.kind !== "failed") return;
    expect(outcome.failure).toMatchObject({ origin: "provider", kind: ModelFailureKind.TRUNCATED, message: "stream ended early", partialText: "half an ans" });
  });

  it("accepts a failure before start (e.g. authentication) and keeps the retryable flag", () => {
    const { outcome } = run([failure(ModelFailureKind.RATE_LIMITED, "slow down")]);
    expect(outcome?.kind === "failed" && outcome.failure).toMatchObject({ origin: "provider", kind: ModelFailureKind.RATE_LIMITED, retryable: true });
  });

  it("prefers the gateway's partial text and keeps partial reasoning", () => {
    const { outcome } = run([start(), thinkingStart(0), thinkingDelta(0, "hmm"), failure(ModelFailureKind.LENGTH, "max tokens", "gateway text")]);
    expect(outcome?.kind === "failed" && outcome.failure).toMatchObject({ partialText: "gateway text", partialReasoning: "hmm", kind: ModelFailureKind.LENGTH });
  });

  it("keeps usage reported before a failure", () => {
    const { outcome } = run([start(), usage(5n, 0n), failure(ModelFailureKind.PROVIDER_ERROR, "500")]);
    expect(outcome?.kind === "failed" && outcome.failure.usage?.inputTokens).toBe(5n);
  });

  it("abandon() fails an unfinished cycle with its partial text", () => {
    const cycle = new ModelCycle();
    cycle.push(start());
    cycle.push(textStart(0));
    cycle.push(textDelta(0, "so far"));
    const outcome = cycle.abandon("provider", ModelFailureKind.UNAVAILABLE, "no event for 15 s", true);
    expect(outcome.kind === "failed" && outcome.failure).toMatchObject({ origin: "provider", kind: ModelFailureKind.UNAVAILABLE, partialText: "so far", retryable: true });
    expect(cycle.outcome).toBe(outcome);
  });
});

describe("ModelCycle: strictness", () => {
  it.each([
    ["a block before start", [textStart(0)], /text_start before start/],
    ["a duplicate start", [start(), start()], /duplicate start/],
    ["usage before start", [usage(1n, 1n)], /usage before start/],
    ["done before start", [done(StopReason.STOP)], /done before start/],
    ["an event without payload", [start(), create(ModelEventSchema, {})], /without a payload/],
    ["a text delta without start", [start(), textDelta(0, "x")], /unknown block index 0/],
    ["a thinking end without start", [start(), thinkingEnd(4)], /unknown block index 4/],
    ["a text end without start", [start(), textEnd(1)], /unknown block index 1/],
    ["a duplicate text start", [start(), textStart(0), textStart(0)], /reuses block index 0/],
    ["a thinking start on a text index", [start(), textStart(0), textEnd(0), thinkingStart(0)], /reuses block index 0/],
    ["a text delta on a thinking block", [start(), thinkingStart(0), textDelta(0, "x")], /block 0 is a thinking block/],
    ["a delta after the block ended", [start(), textStart(0), textEnd(0), textDelta(0, "late")], /block 0 already ended/],
    ["a second end", [start(), textStart(0), textEnd(0), textEnd(0)], /already ended/],
    ["a missing text end at done", [start(), textStart(0), textDelta(0, "x"), done(StopReason.STOP)], /text block 0 is still open/],
    ["a missing thinking end at done", [start(), thinkingStart(2), done(StopReason.STOP)], /thinking block 2 is still open/],
    ["args for an unknown tool index", [start(), toolStart(0, "a"), toolArgs(1, "{")], /unknown block index 1/],
    ["a tool end for an unknown index", [start(), toolEnd(0, "{}")], /unknown block index 0/],
    ["a tool start reusing a text index", [start(), textStart(0), textEnd(0), toolStart(0, "a")], /reuses block index 0/],
    ["a duplicate tool call id", [start(), toolStart(0, "a"), toolStart(1, "a")], /repeats call id "a"/],
    ["an empty tool call id", [start(), toolStart(0, "")], /empty call id/],
    ["an empty tool name", [start(), toolStart(0, "a", "")], /empty tool name/],
    ["text delta on a tool block", [start(), toolStart(0, "a"), textDelta(0, "x")], /block 0 is a tool block/],
    ["tool args after the call ended", [start(), toolStart(0, "a"), toolEnd(0, "{}"), toolArgs(0, "x")], /already ended/],
    ["incomplete tool arguments", [start(), toolStart(0, "a"), toolEnd(0, '{"path": "a"')], /not complete JSON/],
    ["empty tool arguments", [start(), toolStart(0, "a"), toolEnd(0, "")], /not complete JSON/],
    ["an open tool call at done", [start(), toolStart(0, "a"), toolArgs(0, "{}"), done(StopReason.TOOL_USE)], /tool block 0 is still open/],
    ["a second replay", [start(), replay(), replay()], /second replay/],
    ["a second usage", [start(), usage(1n, 1n), usage(2n, 2n)], /second usage/],
    ["done(stop) with tool calls", [start(), toolStart(0, "a"), toolEnd(0, "{}"), done(StopReason.STOP)], /done\(stop\) with 1 tool call/],
    ["done(tool_use) without tool calls", [start(), textStart(0), textEnd(0), done(StopReason.TOOL_USE)], /without any tool call/],
    ["done without a stop reason", [start(), done(StopReason.UNSPECIFIED)], /stop reason 0/],
  ])("fails on %s", (_name, events, pattern) => {
    expectViolation(events, pattern);
  });

  it("fails on any event after done, even a keepalive, and replaces the completed result", () => {
    const cycle = new ModelCycle();
    for (const e of [start(), textStart(0), textEnd(0), done(StopReason.STOP)]) cycle.push(e);
    expect(cycle.outcome?.kind).toBe("completed");
    const step = cycle.push(keepalive());
    expect(step.kind === "ended" && step.outcome.kind).toBe("failed");
    expect(cycle.outcome?.kind === "failed" && cycle.outcome.failure.message).toMatch(/keepalive after the terminal event/);
  });

  it("fails on a second done and on events after a failure", () => {
    const afterDone = new ModelCycle();
    for (const e of [start(), done(StopReason.STOP)]) afterDone.push(e);
    expect(afterDone.push(done(StopReason.STOP)).kind).toBe("ended");
    expect(afterDone.outcome?.kind).toBe("failed");

    const afterFailure = new ModelCycle();
    afterFailure.push(failure(ModelFailureKind.AUTH, "bad key"));
    afterFailure.push(textStart(0));
    expect(afterFailure.outcome?.kind === "failed" && afterFailure.outcome.failure.origin).toBe("protocol");
  });

  it("keeps the partial text of a violated cycle for diagnostics", () => {
    const { outcome } = run([start(), textStart(0), textDelta(0, "partial"), textDelta(9, "x")]);
    expect(outcome?.kind === "failed" && outcome.failure.partialText).toBe("partial");
  });

  it("does not forward the event that broke the stream", () => {
    const { steps } = run([start(), textStart(0), textStart(0)]);
    expect(steps.at(-1)?.kind).toBe("ended");
    expect(steps.filter((s) => s.kind === "accepted" && s.forward !== undefined)).toHaveLength(1);
  });
});
