import { create } from "@bufbuild/protobuf";
import { AssistantMessageSchema } from "@byok/contracts";
import { describe, expect, it } from "vitest";
import { replayKey } from "./replay-store.ts";

const turn = (text: string, args = '{"a": 1}', reasoning = "") =>
  create(AssistantMessageSchema, {
    content: [
      ...(reasoning === "" ? [] : [{ part: { case: "reasoning" as const, value: { text: reasoning } } }]),
      { part: { case: "text", value: { text } } },
      { part: { case: "toolCall", value: { callId: "call_1", name: "f", argumentsJson: args } } },
    ],
  });

describe("replayKey: how a conversation turn is recognised", () => {
  it("depends on the visible content only: text (trimmed), tool calls with canonical arguments; not on reasoning", () => {
    const key = replayKey("m", "r", turn("Let me look. "));
    expect(replayKey("m", "r", turn("Let me look.", '{"a":1}', "the copy a client kept"))).toBe(key);
    expect(replayKey("m", "r", turn("Let me look!"))).not.toBe(key);
    expect(replayKey("m", "r", turn("Let me look.", '{"a":2}'))).not.toBe(key);
  });

  it("is per member and route, and absent for a turn that shows nothing", () => {
    const key = replayKey("m", "r", turn("x"));
    expect(replayKey("other", "r", turn("x"))).not.toBe(key);
    expect(replayKey("m", "other", turn("x"))).not.toBe(key);
    expect(replayKey("m", "r", create(AssistantMessageSchema, { content: [{ part: { case: "reasoning", value: { text: "only thought" } } }] }))).toBeUndefined();
  });
});
