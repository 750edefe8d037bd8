import { describe, expect, it } from "vitest";
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { ClientEventSchema } from "@byok/contracts";
import type { agent } from "@byok/cursor-protocol";
import { EventFrames } from "./event-frames.ts";

function harness(dynamic: string[] = []) {
  const sent: agent.AgentServerMessage[] = [];
  const frames = new EventFrames({
    send: (m) => sent.push(m),
    now: () => 0,
    isDynamicTool: (name) => dynamic.includes(name),
    modelCallIdOf: (index) => `run-1:${index}`,
  });
  let seq = 0n;
  const emit = (event: MessageInitShape<typeof ClientEventSchema>["event"], modelCallIndex = 0) =>
    frames.accept(create(ClientEventSchema, { seq: ++seq, modelCallIndex, event }));
  const updates = () => sent.map((m) => (m.message.value as agent.InteractionUpdate).message);
  return { frames, emit, updates };
}

describe("tool calls while the model streams them", () => {
  it("shows the typed card as soon as the name is known, then the argument text as it arrives", () => {
    const h = harness();
    h.emit({ case: "toolCallStart", value: { index: 0, callId: "call_1", name: "Read" } });
    h.emit({ case: "toolCallArgsDelta", value: { index: 0, delta: '{"path":' } });
    h.emit({ case: "toolCallArgsDelta", value: { index: 0, delta: '"/a.ts"}' } });
    h.emit({ case: "toolCallEnd", value: { index: 0, argumentsJson: '{"path":"/a.ts"}' } });
    const updates = h.updates();
    expect(updates.map((u) => u.case)).toEqual(["partialToolCall", "partialToolCall", "partialToolCall"]);
    const partials = updates.flatMap((u) => (u.case === "partialToolCall" ? [u.value] : []));
    expect(partials.every((p) => p.callId === "call_1" && p.modelCallId === "run-1:0" && p.toolCall?.tool.case === "readToolCall")).toBe(true);
    expect(partials[0]?.toolCall?.toolCallId).toBe("call_1");
    expect(partials.map((p) => p.argsTextDelta).join("")).toBe('{"path":"/a.ts"}');
    expect(h.frames.toolCalls.modelCallIdOf("call_1")).toBe("run-1:0");
    expect(h.frames.toolCalls.modelCallIdOf("never-seen")).toBe("");
  });

  it("streams Write content as edit deltas and puts the path on the card once it is complete", () => {
    const h = harness();
    h.emit({ case: "toolCallStart", value: { index: 2, callId: "call_w", name: "Write" } }, 1);
    for (const piece of ['{"pa', 'th":"/n.md","con', 'tents":"# T\\nline', ' two"}']) h.emit({ case: "toolCallArgsDelta", value: { index: 2, delta: piece } }, 1);
    const updates = h.updates();
    const content = updates.flatMap((u) =>
      u.case === "toolCallDelta" && u.value.toolCallDelta?.delta.case === "editToolCallDelta" ? [u.value.toolCallDelta.delta.value.streamContentDelta] : [],
    );
    expect(content.join("")).toBe("# T\nline two");
    const withPath = updates.find((u) => u.case === "partialToolCall" && u.value.toolCall?.tool.case === "editToolCall" && u.value.toolCall.tool.value.args?.path === "/n.md");
    expect(withPath).toBeDefined();
    expect(updates.every((u) => u.case !== "partialToolCall" || u.value.argsTextDelta === "")).toBe(true);
  });

  it("gives dynamic MCP tools an MCP card and unknown tools an untyped one", () => {
    const h = harness(["weather-now"]);
    h.emit({ case: "toolCallStart", value: { index: 0, callId: "c1", name: "weather-now" } });
    h.emit({ case: "toolCallStart", value: { index: 1, callId: "c2", name: "NoSuchTool" } });
    const cards = h.updates().flatMap((u) => (u.case === "partialToolCall" ? [u.value.toolCall?.tool.case] : []));
    expect(cards).toEqual(["mcpToolCall", undefined]);
  });

  it("drops half-streamed calls on a sequence gap", () => {
    const h = harness();
    h.emit({ case: "toolCallStart", value: { index: 0, callId: "c1", name: "Grep" } });
    h.frames.accept(create(ClientEventSchema, { seq: 9n, modelCallIndex: 0, event: { case: "toolCallArgsDelta", value: { index: 0, delta: "{}" } } }));
    expect(h.updates()).toHaveLength(1);
  });
});
