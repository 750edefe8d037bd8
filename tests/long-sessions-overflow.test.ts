/**
 * End to end (real Postgres, NATS, HTTP): the endpoint refuses a call as too
 * long, in each endpoint kind's own error shape (hand-written fixtures after
 * the documented shapes). One compaction and one retry of that call follow and
 * the turn succeeds; when the retry overflows again the run fails with the
 * typed kind and nothing is appended after the compacted history.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { MockEndpoint, MockResponse } from "@byok/test-support/mock-llm";
import { errorFixture, providerFixture } from "@byok/test-support/fixtures";
import { startGateway, type GatewayHarness } from "@byok/test-support/gateway-harness";
import { updateCases } from "./long-sessions-support.ts";
import { chatStream, finishedOk } from "./tools-support.ts";

interface EndpointCase {
  readonly endpoint: MockEndpoint;
  /** A successful plain-text answer (also used for the summary). */
  text(): MockResponse;
  overflow(): MockResponse;
  /** Does a recorded request carry tools? */
  hasTools(body: Record<string, unknown>): boolean;
}

const CASES: readonly EndpointCase[] = [
  {
    endpoint: "openai-chat",
    text: () => ({ kind: "sse", endpoint: "openai-chat", body: chatStream({ id: "t", text: "A short answer." }) }),
    overflow: () => errorFixture("openai-chat", "openai-context-length-exceeded.handwritten.error.json"),
    hasTools: (body) => Array.isArray(body["tools"]),
  },
  {
    endpoint: "openai-responses",
    text: () => ({ kind: "fixture", file: providerFixture("openai-responses", "openai-gpt4omini-text-logprobs.sse") }),
    // Behind HTTP 200: an error event and response.failed with code context_length_exceeded.
    overflow: () => ({ kind: "fixture", file: providerFixture("openai-responses", "openai-responses-context-length-failed.handwritten.jsonl") }),
    hasTools: (body) => Array.isArray(body["tools"]),
  },
  {
    endpoint: "anthropic",
    text: () => ({ kind: "fixture", file: providerFixture("anthropic", "anthropic-sonnet45-text.jsonl") }),
    overflow: () => errorFixture("anthropic", "anthropic-prompt-too-long.handwritten.error.json"),
    hasTools: (body) => Array.isArray(body["tools"]),
  },
];

describe.each(CASES)("context overflow from $endpoint", (c) => {
  let gw: GatewayHarness | undefined;
  afterEach(async () => {
    await gw?.stop();
    gw = undefined;
  });

  async function twoTurns(second: MockResponse[]) {
    gw = await startGateway({ endpoint: c.endpoint, model: { maxOutputTokens: 8192 } });
    const harness = gw;
    const client = harness.client();
    const chat = client.conversation();
    harness.llm.enqueue(c.text());
    await finishedOk(chat.send("first question", { modelId: harness.modelId }));
    for (const response of second) harness.llm.enqueue(response);
    const run = chat.send("second question", { modelId: harness.modelId });
    return { harness, chat, result: await run.finished };
  }

  it("compacts once, retries the call once, and the turn succeeds", async () => {
    const { harness, result } = await twoTurns([c.overflow(), c.text(), c.text()]);
    expect(result.end.kind, result.describe()).toBe("ok");
    expect(result.violations).toEqual([]);
    const requests = harness.llm.requestsTo(c.endpoint);
    // turn 1, turn 2 (refused), the summary, the retry.
    expect(requests).toHaveLength(4);
    expect(c.hasTools(requests[1]!.body as Record<string, unknown>)).toBe(true);
    expect(c.hasTools(requests[2]!.body as Record<string, unknown>)).toBe(false);
    expect(c.hasTools(requests[3]!.body as Record<string, unknown>)).toBe(true);
    expect(requests[3]!.rawBody).toContain("conversation_summary");
    expect(requests[3]!.rawBody).not.toContain("first question");
    expect(updateCases(result)).toContain("summaryCompleted");
    expect(result.lastSettled?.selfSummaryCount).toBe(1);
  });

  it("overflows twice: a typed error, and nothing appended after the compacted history", async () => {
    const { harness, chat, result } = await twoTurns([c.overflow(), c.text(), c.overflow()]);
    expect(result.end.kind).toBe("error");
    expect(harness.llm.requestsTo(c.endpoint)).toHaveLength(4);
    const runs = await harness.sql<{ status: string; failure_kind: string; failure_message: string; head_revision_id: string }>(
      "SELECT status, failure_kind, failure_message, head_revision_id FROM runs WHERE conversation_id = $1 ORDER BY created_at DESC LIMIT 1",
      [chat.id],
    );
    expect(runs[0]).toMatchObject({ status: "failed", failure_kind: "provider" });
    expect(runs[0]!.failure_message).toMatch(/context overflow after compaction/);
    // The run's head is the compacted revision itself: no answer, no partial text after it.
    const compacted = await harness.sql<{ id: string }>("SELECT id FROM revisions WHERE compacted_from_id IS NOT NULL");
    expect(compacted.map((r) => r.id)).toEqual([runs[0]!.head_revision_id]);
    const children = await harness.sql<{ n: number }>("SELECT count(*)::int AS n FROM revisions WHERE parent_id = $1", [runs[0]!.head_revision_id]);
    expect(children[0]!.n).toBe(0);
    const history = await harness.store("getRevisionMessages", { revisionId: runs[0]!.head_revision_id });
    expect(history.messages.at(-1)?.body.case).toBe("user");
  });
});
