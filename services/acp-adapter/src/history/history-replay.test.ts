import { describe, expect, it } from "vitest";
import { create } from "@bufbuild/protobuf";
import { MessageSchema, UserOrigin } from "@byok/contracts";
import { replayUpdates } from "./history-replay.ts";

describe("history replay", () => {
  it("shows the member's messages, the model's text, thinking and tool calls, and no injected context", () => {
    const history = [
      create(MessageSchema, { body: { case: "user", value: { origin: UserOrigin.CONTEXT, content: [{ part: { case: "text", value: { text: "<environment>" } } }] } } }),
      create(MessageSchema, { body: { case: "user", value: { origin: UserOrigin.USER, content: [{ part: { case: "text", value: { text: "hi" } } }] } } }),
      create(MessageSchema, {
        body: {
          case: "assistant",
          value: {
            content: [
              { part: { case: "reasoning", value: { text: "thinking" } } },
              { part: { case: "text", value: { text: "Reading." } } },
              { part: { case: "toolCall", value: { callId: "c1", name: "read_file", argumentsJson: '{"path":"/w/a"}' } } },
            ],
          },
        },
      }),
      create(MessageSchema, { body: { case: "toolResult", value: { callId: "c1", toolName: "read_file", content: "x".repeat(3000), isError: false } } }),
    ];
    const updates = replayUpdates(history);
    expect(updates.map((u) => u.sessionUpdate)).toEqual(["user_message_chunk", "agent_thought_chunk", "agent_message_chunk", "tool_call", "tool_call_update"]);
    expect(updates[3]).toMatchObject({ toolCallId: "c1", kind: "read", title: "Read /w/a", locations: [{ path: "/w/a" }] });
    const result = updates[4];
    expect(result).toMatchObject({ toolCallId: "c1", status: "completed" });
    const text = result?.sessionUpdate === "tool_call_update" && result.content?.[0]?.type === "content" && result.content[0].content.type === "text" ? result.content[0].content.text : "";
    expect(text.length).toBeLessThan(2100);
  });
});
