import { describe, expect, it } from "vitest";
import {
  decodeClientEventFrame,
  decodeModelEventFrame,
  encodeClientEventFrame,
  encodeModelEventFrame,
  encodeModelEventPart,
  frameMessagesWithin,
  joinFrameParts,
} from "./event-frames.ts";

describe("event frames", () => {
  it("carries one or several events in order", () => {
    const one = decodeModelEventFrame(encodeModelEventFrame([{ seq: 1n, event: { case: "keepalive", value: {} } }]));
    expect(one.map((e) => [e.seq, e.event.case])).toEqual([[1n, "keepalive"]]);
    const parts = [
      encodeModelEventPart({ seq: 2n, event: { case: "textDelta", value: { index: 0, text: "héllo" } } }),
      encodeModelEventPart({ seq: 3n, event: { case: "textEnd", value: { index: 0 } } }),
      encodeModelEventPart({ seq: 4n, event: { case: "keepalive", value: {} } }),
    ];
    const many = decodeModelEventFrame(joinFrameParts(parts));
    expect(many.map((e) => [e.seq, e.event.case])).toEqual([
      [2n, "textDelta"],
      [3n, "textEnd"],
      [4n, "keepalive"],
    ]);
    expect(many[0]?.event.case === "textDelta" && many[0].event.value.text).toBe("héllo");
  });

  it("refuses an empty or truncated frame", () => {
    expect(() => decodeModelEventFrame(new Uint8Array(0))).toThrow(/empty/);
    const whole = encodeModelEventFrame([{ seq: 1n, event: { case: "textDelta", value: { index: 0, text: "abc" } } }]);
    expect(() => decodeModelEventFrame(whole.subarray(0, whole.length - 1))).toThrow();
  });

  it("carries ClientEvents the same way, their model call index included", () => {
    const frame = encodeClientEventFrame([
      { seq: 7n, modelCallIndex: 1, event: { case: "textDelta", value: { index: 0, text: "a" } } },
      { seq: 8n, modelCallIndex: 1, event: { case: "textEnd", value: { index: 0 } } },
    ]);
    expect(decodeClientEventFrame(frame).map((e) => [e.seq, e.modelCallIndex, e.event.case])).toEqual([
      [7n, 1, "textDelta"],
      [8n, 1, "textEnd"],
    ]);
    expect(() => decodeClientEventFrame(new Uint8Array(0))).toThrow(/empty ClientEvent frame/);
  });

  it("splits a pass's events over several messages only when one would exceed the bus limit, keeping their order", () => {
    const delta = (seq: bigint, chars: number) => encodeModelEventPart({ seq, event: { case: "toolCallArgsDelta", value: { index: 0, delta: "x".repeat(chars) } } });
    const small = [delta(1n, 10), delta(2n, 10)];
    expect(frameMessagesWithin(small, 1000)).toHaveLength(1);
    // A large tool call's last arguments and its whole arguments in one pass: over the limit together.
    const large = [delta(1n, 600), delta(2n, 10), encodeModelEventPart({ seq: 3n, event: { case: "toolCallEnd", value: { index: 0, argumentsJson: "y".repeat(700) } } }), delta(4n, 10)];
    const messages = frameMessagesWithin(large, 1000);
    expect(messages.length).toBe(2);
    for (const message of messages) expect(message.length).toBeLessThanOrEqual(1000);
    expect(messages.flatMap((m) => decodeModelEventFrame(m).map((e) => e.seq))).toEqual([1n, 2n, 3n, 4n]);
    // One event larger than the limit goes alone.
    const alone = frameMessagesWithin([delta(1n, 10), delta(2n, 2000), delta(3n, 10)], 1000);
    expect(alone.map((m) => decodeModelEventFrame(m).map((e) => e.seq))).toEqual([[1n], [2n], [3n]]);
  });
});
