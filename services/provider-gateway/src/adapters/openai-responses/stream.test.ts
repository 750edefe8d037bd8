/**
 * Responses stream strictness: only response.completed completes a call;
 * broken streams end in typed failures that the run worker's ModelCycle
 * accepts as those failures.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startMockLlm, type MockLlm } from "@byok/test-support/mock-llm";
import { providerFixture } from "@byok/test-support/fixtures";
import { fixturePayloads } from "../../testing/fixture-oracle.ts";
import type { CallResult } from "../../testing/call-kit.ts";
import { cycleCheckedCall } from "../stream-test-support.ts";

let llm: MockLlm;
beforeAll(async () => {
  llm = await startMockLlm();
});
afterAll(async () => {
  await llm.stop();
});

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- event JSON

const callFixture = fixturePayloads(providerFixture("openai-responses", "openai-gpt4o-function-call-turn1.sse"));
const completed = callFixture.find((p) => p["type"] === "response.completed") as Json;
const withoutTerminal = callFixture.filter((p) => p["type"] !== "response.completed");

const added = (index: number, item: Json): Json => ({ type: "response.output_item.added", output_index: index, item });
const message = (index: number, id: string): Json => added(index, { type: "message", id, role: "assistant", content: [], status: "in_progress" });
const textDelta = (index: number, id: string, delta: string): Json => ({ type: "response.output_text.delta", item_id: id, output_index: index, content_index: 0, delta });
const done = (output: Json[] = [], extra: Json = {}): Json => ({ type: "response.completed", response: { id: "resp_1", status: "completed", output, usage: { input_tokens: 4, output_tokens: 2 }, ...extra } });

function run(chunks: Json[], body?: string): Promise<CallResult> {
  return cycleCheckedCall(llm, "openai-responses", body === undefined ? { kind: "chunks", endpoint: "openai-responses", chunks } : { kind: "sse", endpoint: "openai-responses", body });
}

describe("openai-responses stream strictness", () => {
  it("EOF without a terminal event is TRUNCATED", async () => {
    const { summary } = await run(withoutTerminal);
    expect(summary.failure?.kind).toBe("TRUNCATED");
  });

  it("a [DONE] line after response.completed is ignored", async () => {
    const sse = [...callFixture.map((p) => `event: ${p["type"]}\ndata: ${JSON.stringify(p)}\n\n`), "data: [DONE]\n\n"].join("");
    const { summary } = await run([], sse);
    expect(summary).toMatchObject({ outcome: "ok", stopReason: "tool_use" });
  });

  it("a function call whose arguments never got .done ends with the snapshot's arguments", async () => {
    const { summary } = await run([...withoutTerminal.filter((p) => !p["type"].endsWith("arguments.done") && p["type"] !== "response.output_item.done"), completed]);
    expect(summary.toolCalls[0]?.argumentsJson).toBe(completed["response"].output[0].arguments);
  });

  const protocolCases: Array<[string, Json[]]> = [
    ["an event after response.completed", [...callFixture, { type: "response.output_text.delta", output_index: 0, content_index: 0, delta: "late" }]],
    ["a text delta for an item that was never added", [message(0, "msg_1"), textDelta(5, "msg_x", "hi"), done()]],
    ["the same output index added twice", [message(0, "msg_1"), message(0, "msg_2"), done()]],
    ["function call arguments that are not complete JSON", [...withoutTerminal.map((p) => (p["type"] === "response.function_call_arguments.done" ? { ...p, arguments: '{"country":' } : p)), completed]],
    ["a function call that only the snapshot lists", [message(0, "msg_1"), textDelta(0, "msg_1", "hi"), done([{ type: "function_call", id: "fc_9", call_id: "call_9", name: "f", arguments: "{}" }])]],
  ];
  for (const [what, chunks] of protocolCases) {
    it(`${what} is a PROTOCOL failure`, async () => {
      const { summary } = await run(chunks);
      expect(summary.failure?.kind).toBe("PROTOCOL");
    });
  }

  it("incomplete for the content filter is REFUSAL; for an unknown reason INCOMPLETE", async () => {
    const incomplete = (reason: string): Json => ({ type: "response.incomplete", response: { status: "incomplete", incomplete_details: { reason }, output: [], usage: { input_tokens: 1, output_tokens: 1 } } });
    expect((await run([message(0, "m"), textDelta(0, "m", "x"), incomplete("content_filter")])).summary.failure?.kind).toBe("REFUSAL");
    const other = await run([message(0, "m"), textDelta(0, "m", "x"), incomplete("something_new")]);
    expect(other.summary.failure?.kind).toBe("INCOMPLETE");
    expect(other.summary.usage).toEqual({ inputTokens: 1, outputTokens: 1 });
  });

  it("an error event with top-level fields (documented shape) is a PROVIDER_ERROR with its code", async () => {
    const { summary } = await run([message(0, "m"), { type: "error", code: "server_error", message: "boom", param: null }]);
    expect(summary.failure).toMatchObject({ kind: "PROVIDER_ERROR", providerCode: "server_error" });
    expect(summary.failure?.message).toContain("boom");
  });

  it("a refusal part is REFUSAL", async () => {
    const { summary } = await run([message(0, "m"), { type: "response.refusal.delta", output_index: 0, content_index: 0, delta: "No." }, done()]);
    expect(summary.failure?.kind).toBe("REFUSAL");
  });
});
