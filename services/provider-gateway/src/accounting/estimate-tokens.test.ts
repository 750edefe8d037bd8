import { describe, expect, it } from "vitest";
import { create } from "@bufbuild/protobuf";
import { MessageSchema, ModelRequestSchema } from "@byok/contracts";
import { addEstimates, estimateMessages, estimateRequestTokens } from "./estimate-tokens.ts";

const text = (t: string) => create(MessageSchema, { body: { case: "user", value: { content: [{ part: { case: "text", value: { text: t } } }] } } });
const image = () => create(MessageSchema, { body: { case: "user", value: { content: [{ part: { case: "image", value: { mimeType: "image/png", data: new Uint8Array(50_000) } } }] } } });
const result = (content: string) => create(MessageSchema, { body: { case: "toolResult", value: { callId: "c", toolName: "Read", content } } });

describe("estimateRequestTokens", () => {
  it("counts about 4 characters per token over prompt and messages, and 1,000 per image", () => {
    const request = create(ModelRequestSchema, { prompt: { systemText: "s".repeat(400) }, messages: [text("x".repeat(400)), image(), result("r".repeat(800))] });
    expect(estimateRequestTokens(request)).toBe(400 + 1_000);
  });

  it("gives the same figure from a kept estimate of the messages, summed over a held history and what follows it", () => {
    const held = [text("a".repeat(1000)), result("b".repeat(3000)), image()];
    const after = [text("c".repeat(7))];
    const request = create(ModelRequestSchema, { prompt: { systemText: "system" }, messages: [...held, ...after] });
    expect(estimateRequestTokens(request, addEstimates(estimateMessages(held), estimateMessages(after)))).toBe(estimateRequestTokens(request));
  });
});
