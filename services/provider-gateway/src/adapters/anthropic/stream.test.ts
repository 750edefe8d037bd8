/**
 * Anthropic stream strictness: only message_stop (with a finishing
 * stop_reason) completes a call; broken streams end in typed failures that
 * the run worker's ModelCycle accepts as those failures.
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

const toolTurn = fixturePayloads(providerFixture("anthropic", "anthropic-sonnet46-tool-use-turn1.sse"));
const messageStart = toolTurn[0] as Json;
const stop: Json = { type: "message_stop" };
const delta = (stopReason: string, usage: Json = { output_tokens: 5 }): Json => ({ type: "message_delta", delta: { stop_reason: stopReason, stop_sequence: null }, usage });
const blockStart = (index: number, block: Json): Json => ({ type: "content_block_start", index, content_block: block });
const text = (index: number, t: string): Json => ({ type: "content_block_delta", index, delta: { type: "text_delta", text: t } });
const json = (index: number, partial: string): Json => ({ type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: partial } });
const blockStop = (index: number): Json => ({ type: "content_block_stop", index });

function run(chunks: Json[]): Promise<CallResult> {
  return cycleCheckedCall(llm, "anthropic", { kind: "chunks", endpoint: "anthropic", chunks });
}

describe("anthropic stream strictness", () => {
  it("EOF before message_stop is TRUNCATED, even after message_delta", async () => {
    const { summary } = await run(toolTurn.filter((p) => p["type"] !== "message_stop"));
    expect(summary.failure?.kind).toBe("TRUNCATED");
  });

  it("tool arguments are the concatenated partial_json, valid JSON at content_block_stop", async () => {
    const { summary } = await run([messageStart, blockStart(0, { type: "tool_use", id: "toolu_1", name: "f", input: {} }), json(0, ""), json(0, '{"a"'), json(0, ": [1, 2]}"), blockStop(0), delta("tool_use"), stop]);
    expect(summary.toolCalls).toEqual([{ callId: "toolu_1", name: "f", argumentsJson: '{"a": [1, 2]}' }]);
  });

  const protocolCases: Array<[string, Json[]]> = [
    ["a second message_start", [messageStart, messageStart, delta("end_turn"), stop]],
    ["a delta for a block that is not open", [messageStart, blockStart(0, { type: "text", text: "" }), text(1, "x"), blockStop(0), delta("end_turn"), stop]],
    ["a block starting while another is open", [messageStart, blockStart(0, { type: "text", text: "" }), blockStart(1, { type: "text", text: "" }), delta("end_turn"), stop]],
    ["tool arguments that are not complete JSON at content_block_stop", [messageStart, blockStart(0, { type: "tool_use", id: "toolu_1", name: "f", input: {} }), json(0, '{"a":'), blockStop(0), delta("tool_use"), stop]],
    ["an event after message_stop", [messageStart, blockStart(0, { type: "text", text: "" }), text(0, "x"), blockStop(0), delta("end_turn"), stop, text(0, "late")]],
    ["tool_use stop without a tool call", [messageStart, blockStart(0, { type: "text", text: "" }), text(0, "x"), blockStop(0), delta("tool_use"), stop]],
    ["end_turn with a block never stopped", [messageStart, blockStart(0, { type: "text", text: "" }), text(0, "x"), delta("end_turn"), stop]],
    ["content before message_start", [blockStart(0, { type: "text", text: "" }), messageStart, delta("end_turn"), stop]],
  ];
  for (const [what, chunks] of protocolCases) {
    it(`${what} is a PROTOCOL failure`, async () => {
      const { summary } = await run(chunks);
      expect(summary.failure?.kind).toBe("PROTOCOL");
    });
  }

  it("max_tokens inside an unfinished tool call is LENGTH; no tool call ends", async () => {
    const { summary, events } = await run([messageStart, blockStart(0, { type: "tool_use", id: "toolu_1", name: "f", input: {} }), json(0, '{"a": "tru'), delta("max_tokens"), stop]);
    expect(summary.failure?.kind).toBe("LENGTH");
    expect(events.some((e) => e.case === "toolCallEnd")).toBe(false);
  });

  it("a rate limit error inside the stream is RATE_LIMITED and keeps the partial text", async () => {
    const { summary } = await run([messageStart, blockStart(0, { type: "text", text: "" }), text(0, "Hel"), { type: "error", error: { type: "rate_limit_error", message: "slow down" } }]);
    expect(summary.failure).toMatchObject({ kind: "RATE_LIMITED", partialText: "Hel", providerCode: "rate_limit_error" });
  });

  it("unknown block and delta types pass", async () => {
    const { summary } = await run([
      messageStart,
      blockStart(0, { type: "server_tool_use", id: "srvtoolu_1", name: "web_search", input: {} }),
      json(0, '{"query":"x"}'),
      blockStop(0),
      blockStart(1, { type: "text", text: "" }),
      { type: "content_block_delta", index: 1, delta: { type: "citations_delta", citation: {} } },
      text(1, "answer"),
      blockStop(1),
      { type: "some_future_event" },
      delta("end_turn"),
      stop,
    ]);
    expect(summary).toMatchObject({ outcome: "ok", text: "answer", toolCalls: [] });
  });
});
