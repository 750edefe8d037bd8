import { describe, expect, it } from "vitest";
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { ClientEventSchema } from "@byok/contracts";
import { agent } from "@byok/cursor-protocol";
import { EventFrames } from "./event-frames.ts";

type EventInit = MessageInitShape<typeof ClientEventSchema>["event"];

function harness() {
  const sent: agent.AgentServerMessage[] = [];
  let clock = 1_000;
  const frames = new EventFrames({ send: (m) => sent.push(m), now: () => clock });
  let seq = 0n;
  return {
    frames,
    advance: (ms: number) => (clock += ms),
    emit(event: EventInit, options: { seq?: bigint; modelCallIndex?: number } = {}) {
      seq = options.seq ?? seq + 1n;
      frames.accept(create(ClientEventSchema, { seq, modelCallIndex: options.modelCallIndex ?? 0, event }));
    },
    updates: () => sent.map((m) => (m.message.value as agent.InteractionUpdate).message),
  };
}

describe("client events to interaction updates", () => {
  it("maps thinking, text and usage", () => {
    const h = harness();
    h.emit({ case: "thinkingStart", value: { index: 0 } });
    h.emit({ case: "thinkingDelta", value: { index: 0, text: "Hmm" } });
    h.advance(250);
    h.emit({ case: "thinkingEnd", value: { index: 0 } });
    h.emit({ case: "textStart", value: { index: 1 } });
    h.emit({ case: "textDelta", value: { index: 1, text: "Hi " } });
    h.emit({ case: "textDelta", value: { index: 1, text: "there" } });
    h.emit({ case: "textEnd", value: { index: 1 } });
    h.emit({ case: "usage", value: { inputTokens: 10n, outputTokens: 7n } });

    expect(h.updates()).toEqual([
      { case: "thinkingDelta", value: create(agent.ThinkingDeltaUpdateSchema, { text: "Hmm", thinkingStyle: agent.ThinkingStyle.DEFAULT }) },
      { case: "thinkingCompleted", value: create(agent.ThinkingCompletedUpdateSchema, { thinkingDurationMs: 250 }) },
      { case: "textDelta", value: create(agent.TextDeltaUpdateSchema, { text: "Hi " }) },
      { case: "textDelta", value: create(agent.TextDeltaUpdateSchema, { text: "there" }) },
      { case: "tokenDelta", value: create(agent.TokenDeltaUpdateSchema, { tokens: 7 }) },
    ]);
    expect(h.frames.thinkingDurations()).toEqual([250]);
  });

  it("reports at least 1 ms of thinking and sends no token delta without output tokens", () => {
    const h = harness();
    h.emit({ case: "thinkingStart", value: { index: 0 } });
    h.emit({ case: "thinkingEnd", value: { index: 0 } });
    h.emit({ case: "usage", value: { inputTokens: 10n } });
    expect(h.updates()).toEqual([{ case: "thinkingCompleted", value: create(agent.ThinkingCompletedUpdateSchema, { thinkingDurationMs: 1 }) }]);
  });

  it("closes an open thinking block on a sequence gap", () => {
    const h = harness();
    h.emit({ case: "thinkingStart", value: { index: 0 } });
    h.emit({ case: "thinkingDelta", value: { index: 0, text: "a" } });
    h.advance(30);
    // seq 3 and 4 were lost; a new owner continues.
    h.emit({ case: "textDelta", value: { index: 0, text: "b" } }, { seq: 5n });
    expect(h.updates().map((u) => u.case)).toEqual(["thinkingDelta", "thinkingCompleted", "textDelta"]);
  });

  it("closes thinking before text and when the model call changes", () => {
    const h = harness();
    h.emit({ case: "thinkingStart", value: { index: 0 } });
    h.emit({ case: "textDelta", value: { index: 1, text: "x" } });
    h.emit({ case: "thinkingStart", value: { index: 0 } }, { modelCallIndex: 1 });
    h.emit({ case: "thinkingStart", value: { index: 0 } }, { modelCallIndex: 2 });
    expect(h.updates().map((u) => u.case)).toEqual(["thinkingCompleted", "textDelta", "thinkingCompleted"]);
    h.frames.closeOpenBlocks();
    expect(h.updates().map((u) => u.case)).toEqual(["thinkingCompleted", "textDelta", "thinkingCompleted", "thinkingCompleted"]);
    h.frames.closeOpenBlocks();
    expect(h.updates()).toHaveLength(4);
  });
});
