import { describe, expect, it } from "vitest";
import { create } from "@bufbuild/protobuf";
import { MessageSchema } from "./gen/byok/v1/history_pb.js";
import { historySize, messageSize } from "./message-size.ts";

describe("messageSize", () => {
  it("grows with the data a message carries, whatever its kind", () => {
    const user = (text: string) => create(MessageSchema, { body: { case: "user", value: { content: [{ part: { case: "text", value: { text } } }] } } });
    const result = (content: string) => create(MessageSchema, { body: { case: "toolResult", value: { callId: "call", toolName: "Read", content } } });
    const image = (bytes: number) => create(MessageSchema, { body: { case: "user", value: { content: [{ part: { case: "image", value: { mimeType: "image/png", data: new Uint8Array(bytes) } } }] } } });
    const call = (args: string) =>
      create(MessageSchema, { body: { case: "assistant", value: { content: [{ part: { case: "toolCall", value: { callId: "c", name: "Write", argumentsJson: args } } }], replay: { data: new Uint8Array(500) } } } });
    expect(messageSize(user("x".repeat(1000))) - messageSize(user(""))).toBe(1000);
    expect(messageSize(result("x".repeat(2_000_000)))).toBeGreaterThan(2_000_000);
    expect(messageSize(image(300_000))).toBeGreaterThan(300_000);
    expect(messageSize(call("y".repeat(5000))) - messageSize(call(""))).toBe(5000);
    expect(historySize([user("ab"), result("cd")])).toBe(messageSize(user("ab")) + messageSize(result("cd")));
  });
});
