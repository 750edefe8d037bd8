/**
 * Conformance of the two sides of a ModelEvent stream with the one table of
 * stream rules (@byok/model-stream): the provider gateway's writer, which
 * produces streams, and the run worker's ModelCycle, which reads them.
 *
 * 1. The same raw event sequences go through the writer's emission gate
 *    (ModelEventGate, the path every event of ModelEventWriter takes) and
 *    through ModelCycle: both must refuse the same event with the same
 *    reason, or accept the whole sequence with the same terminal.
 * 2. Writer scripts (how adapters use the writer, misuse included, ended the
 *    way model-call.ts ends a call that threw): ModelCycle must accept every
 *    stream the writer emits and reach the outcome the writer reported.
 *
 * No infrastructure: pure objects from both services.
 */
import { describe, expect, it } from "vitest";
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { ModelEventSchema, ModelFailureKind, StopReason } from "@byok/contracts";
import { ModelEventGate, ModelEventWriter, ProtocolViolation, type ModelEventBody } from "../services/provider-gateway/src/events.ts";
import { ModelCycle } from "../services/run-worker/src/model-cycle.ts";

type Event = NonNullable<MessageInitShape<typeof ModelEventSchema>["event"]>;

const start: Event = { case: "start", value: { providerKind: "openai-chat", routeId: "m", upstreamModel: "u" } };
const textStart = (index: number): Event => ({ case: "textStart", value: { index } });
const textDelta = (index: number, text: string): Event => ({ case: "textDelta", value: { index, text } });
const textEnd = (index: number): Event => ({ case: "textEnd", value: { index } });
const thinkingStart = (index: number): Event => ({ case: "thinkingStart", value: { index } });
const thinkingDelta = (index: number, text: string): Event => ({ case: "thinkingDelta", value: { index, text } });
const thinkingEnd = (index: number): Event => ({ case: "thinkingEnd", value: { index } });
const toolStart = (index: number, callId: string, name = "Read"): Event => ({ case: "toolCallStart", value: { index, callId, name } });
const toolArgs = (index: number, delta: string): Event => ({ case: "toolCallArgsDelta", value: { index, delta } });
const toolEnd = (index: number, argumentsJson: string): Event => ({ case: "toolCallEnd", value: { index, argumentsJson } });
const usage: Event = { case: "usage", value: { inputTokens: 3n, outputTokens: 1n } };
const replay: Event = { case: "replay", value: { providerKind: "openai-chat", routeId: "m", data: new Uint8Array([1]) } };
const done = (reason: StopReason): Event => ({ case: "done", value: { reason } });
const failure: Event = { case: "failure", value: { kind: ModelFailureKind.TRUNCATED, message: "cut" } };
const keepalive: Event = { case: "keepalive", value: {} };
const empty = { case: undefined } as unknown as Event;

const SEQUENCES: ReadonlyArray<readonly [string, readonly Event[]]> = [
  ["a text answer", [start, keepalive, textStart(0), textDelta(0, "Hel"), textDelta(0, "lo"), textEnd(0), replay, usage, done(StopReason.STOP)]],
  ["usage before the replay state", [start, textStart(0), textEnd(0), usage, replay, done(StopReason.STOP)]],
  ["no replay state", [start, textStart(0), textEnd(0), done(StopReason.STOP)]],
  ["an empty answer", [start, done(StopReason.STOP)]],
  ["thinking, text, overlapping tool calls", [start, thinkingStart(0), thinkingDelta(0, "hm"), thinkingEnd(0), textStart(1), textEnd(1), toolStart(2, "a"), toolStart(3, "b"), toolArgs(3, "{}"), toolArgs(2, "{"), toolArgs(2, "}"), toolEnd(3, "{}"), toolEnd(2, "{}"), replay, done(StopReason.TOOL_USE)]],
  ["text while a tool call is open", [start, toolStart(0, "a"), textStart(1), textEnd(1), toolEnd(0, "{}"), done(StopReason.TOOL_USE)]],
  ["a failure before start", [failure]],
  ["a failure with open blocks and usage", [start, textStart(0), toolStart(1, "a"), usage, failure]],
  ["keepalives before start", [keepalive, keepalive, start, done(StopReason.STOP)]],
  ["a block before start", [textStart(0)]],
  ["a duplicate start", [start, start]],
  ["usage before start", [usage]],
  ["replay before start", [replay]],
  ["done before start", [done(StopReason.STOP)]],
  ["an event without payload", [start, empty]],
  ["a delta for an unknown index", [start, textDelta(0, "x")]],
  ["an end for an unknown index", [start, thinkingEnd(4)]],
  ["a reused index", [start, textStart(0), textEnd(0), thinkingStart(0)]],
  ["a text delta on a thinking block", [start, thinkingStart(0), textDelta(0, "x")]],
  ["a delta after the end", [start, textStart(0), textEnd(0), textDelta(0, "late")]],
  ["overlapping text blocks", [start, textStart(0), textStart(1)]],
  ["thinking inside text", [start, textStart(0), thinkingStart(1)]],
  ["a block after usage", [start, usage, textStart(0)]],
  ["a tool call after the replay state", [start, replay, toolStart(0, "a")]],
  ["a duplicate call id", [start, toolStart(0, "a"), toolStart(1, "a")]],
  ["an empty call id", [start, toolStart(0, "")]],
  ["an empty tool name", [start, toolStart(0, "a", "")]],
  ["tool arguments that are not JSON", [start, toolStart(0, "a"), toolEnd(0, '{"path": "a"')]],
  ["tool arguments that are a JSON array", [start, toolStart(0, "a"), toolEnd(0, "[1]")]],
  ["empty tool arguments at the end", [start, toolStart(0, "a"), toolEnd(0, "")]],
  ["an open text block at done", [start, textStart(0), done(StopReason.STOP)]],
  ["an open tool call at done", [start, toolStart(0, "a"), done(StopReason.TOOL_USE)]],
  ["a second replay state", [start, replay, replay]],
  ["a second usage", [start, usage, usage]],
  ["done(stop) with a tool call", [start, toolStart(0, "a"), toolEnd(0, "{}"), done(StopReason.STOP)]],
  ["done(tool_use) without a tool call", [start, done(StopReason.TOOL_USE)]],
  ["done without a stop reason", [start, done(StopReason.UNSPECIFIED)]],
  ["a keepalive after done", [start, done(StopReason.STOP), keepalive]],
  ["a second done", [start, done(StopReason.STOP), done(StopReason.STOP)]],
  ["an event after a failure", [failure, textStart(0)]],
  ["a second failure", [start, failure, failure]],
];

type Verdict = { kind: "refused"; at: number; reason: string } | { kind: "accepted"; terminal: "done" | "failure" | "none" };

const PREFIX = "model stream protocol violation: ";

function throughGate(events: readonly Event[]): Verdict {
  const gate = new ModelEventGate(() => undefined);
  for (const [at, event] of events.entries()) {
    try {
      gate.send(event);
    } catch (error) {
      if (!(error instanceof ProtocolViolation)) throw error;
      return { kind: "refused", at, reason: error.message };
    }
  }
  return { kind: "accepted", terminal: terminalOf(events) };
}

function throughCycle(events: readonly Event[]): Verdict {
  const cycle = new ModelCycle();
  for (const [at, event] of events.entries()) {
    const step = cycle.push(create(ModelEventSchema, { seq: BigInt(at + 1), event }));
    if (step.kind === "ended" && step.outcome.kind === "failed" && step.outcome.failure.origin === "protocol") {
      expect(step.outcome.failure.message.startsWith(PREFIX)).toBe(true);
      return { kind: "refused", at, reason: step.outcome.failure.message.slice(PREFIX.length) };
    }
  }
  const outcome = cycle.outcome;
  const terminal = outcome === undefined ? "none" : outcome.kind === "completed" ? "done" : "failure";
  expect(terminal).toBe(terminalOf(events));
  return { kind: "accepted", terminal };
}

function terminalOf(events: readonly Event[]): "done" | "failure" | "none" {
  const last = events.at(-1);
  return last?.case === "done" ? "done" : last?.case === "failure" ? "failure" : "none";
}

describe("writer gate and ModelCycle apply the same stream rules", () => {
  it.each(SEQUENCES)("%s", (_name, events) => {
    expect(throughGate(events)).toEqual(throughCycle(events));
  });

  it("the corpus has both accepted and refused sequences of every terminal", () => {
    const verdicts = SEQUENCES.map(([, events]) => throughCycle(events));
    expect(verdicts.filter((v) => v.kind === "refused").length).toBeGreaterThan(20);
    expect(new Set(verdicts.flatMap((v) => (v.kind === "accepted" ? [v.terminal] : [])))).toEqual(new Set(["done", "failure"]));
  });
});

type Script = (writer: ModelEventWriter) => void;
const REPLAY = { providerKind: "openai-chat", routeId: "m", data: new Uint8Array([7]) };
const USAGE = { inputTokens: 10n, outputTokens: 2n };

const SCRIPTS: ReadonlyArray<readonly [string, Script, "completed" | "failed"]> = [
  ["a text answer", (w) => { w.start("k", "m", "u"); const t = w.beginText(); w.textDelta(t, "hi"); w.textDelta(t, ""); w.complete(StopReason.STOP, REPLAY, USAGE); }, "completed"],
  ["thinking closed by the text that follows", (w) => { w.start("k", "m", "u"); const r = w.beginThinking(); w.thinkingDelta(r, "hm"); const t = w.beginText(); w.textDelta(t, "ok"); w.complete(StopReason.STOP, REPLAY, undefined); }, "completed"],
  ["chat-style parallel calls ended at finish", (w) => { w.start("k", "m", "u"); const t = w.beginText(); w.textDelta(t, "Reading."); const a = w.beginToolCall("a", "Read"); w.toolArgsDelta(a, '{"p":'); const b = w.beginToolCall("b", "Grep"); w.toolArgsDelta(b, "{}"); w.toolArgsDelta(a, "1}"); w.closeFlowBlocks(); w.endToolCall(a); w.endToolCall(b); w.complete(StopReason.TOOL_USE, REPLAY, USAGE); }, "completed"],
  ["a call without arguments", (w) => { w.start("k", "m", "u"); const a = w.beginToolCall("a", "List"); w.endToolCall(a); w.complete(StopReason.TOOL_USE, REPLAY, undefined); }, "completed"],
  ["final arguments that replace the deltas", (w) => { w.start("k", "m", "u"); const a = w.beginToolCall("a", "Read"); w.toolArgsDelta(a, '{"p"'); w.endToolCall(a, '{"p":1}'); w.complete(StopReason.TOOL_USE, REPLAY, undefined); }, "completed"],
  ["a duplicate call id", (w) => { w.start("k", "m", "u"); w.beginToolCall("a", "Read"); w.beginToolCall("a", "Read"); }, "failed"],
  ["arguments that are not JSON", (w) => { w.start("k", "m", "u"); const a = w.beginToolCall("a", "Read"); w.toolArgsDelta(a, '{"p":'); w.endToolCall(a); }, "failed"],
  ["stop with a tool call", (w) => { w.start("k", "m", "u"); const a = w.beginToolCall("a", "Read"); w.endToolCall(a); w.complete(StopReason.STOP, REPLAY, USAGE); }, "failed"],
  ["a tool call never ended", (w) => { w.start("k", "m", "u"); w.beginToolCall("a", "Read"); w.noteUsage(USAGE); w.complete(StopReason.TOOL_USE, REPLAY, USAGE); }, "failed"],
  ["content before start", (w) => { w.noteUsage(USAGE); w.beginText(); }, "failed"],
  ["a delta for a closed block", (w) => { w.start("k", "m", "u"); const t = w.beginText(); w.endBlock(t); w.textDelta(t, "late"); }, "failed"],
  ["an event after completion", (w) => { w.start("k", "m", "u"); w.complete(StopReason.STOP, REPLAY, undefined); w.beginText(); }, "completed"],
  ["a failure with usage and open blocks", (w) => { w.start("k", "m", "u"); const t = w.beginText(); w.textDelta(t, "par"); w.beginToolCall("a", "Read"); w.noteUsage(USAGE); w.fail(ModelFailureKind.LENGTH, "max tokens"); }, "failed"],
];

/** Runs a script and ends a throwing one like model-call.ts does (a PROTOCOL failure). */
function runScript(script: Script): { events: Event[]; threw: boolean } {
  const events: ModelEventBody[] = [];
  const writer = new ModelEventWriter((event) => events.push(event));
  let threw = false;
  try {
    script(writer);
  } catch (error) {
    if (!(error instanceof ProtocolViolation)) throw error;
    threw = true;
    writer.fail(ModelFailureKind.PROTOCOL, `the endpoint broke its stream protocol: ${error.message}`);
  }
  return { events, threw };
}

describe("ModelCycle accepts every stream the writer emits", () => {
  it.each(SCRIPTS)("%s", (_name, script, expected) => {
    const { events, threw } = runScript(script);
    const cycle = new ModelCycle();
    for (const [at, event] of events.entries()) cycle.push(create(ModelEventSchema, { seq: BigInt(at + 1), event }));
    const outcome = cycle.outcome;
    expect(outcome?.kind).toBe(expected);
    if (outcome?.kind === "failed") {
      expect(outcome.failure.origin).toBe("provider");
      if (threw) expect(outcome.failure.kind).toBe(ModelFailureKind.PROTOCOL);
    }
    expect(events.filter((e) => e.case === "done" || e.case === "failure")).toHaveLength(1);
  });
});
