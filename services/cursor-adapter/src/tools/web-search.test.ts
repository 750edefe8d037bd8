import { create } from "@bufbuild/protobuf";
import { tools } from "@byok/cursor-protocol";
import { describe, expect, it } from "vitest";
import { planToolCall } from "./plan-tool-call.ts";
import { invalidOf, testContext, variantOf } from "./tool-test-support.ts";
import type { ToolPlan } from "./types.ts";
import { NO_WEB_TOOLS, type SearchOutcome } from "./web-tools.ts";

function webSearch(args: object, outcome: SearchOutcome = { kind: "results", hits: [{ title: "Widget docs", url: "https://w.example/docs", snippet: "How to widget" }] }): ToolPlan {
  const web = { ...NO_WEB_TOOLS, searchEnabled: true, search: () => Promise.resolve(outcome) };
  const plan = planToolCall({ callId: "call_ws", name: "WebSearch", argumentsJson: JSON.stringify(args) }, testContext({ web }));
  return plan;
}

describe("WebSearch", () => {
  it("asks for approval, then searches and returns the hits as JSON and the card's references", async () => {
    const plan = webSearch({ search_term: " widget install " });
    if (plan.kind !== "interaction") throw new Error(plan.kind);
    expect(plan.query).toMatchObject({ case: "webSearchRequestQuery", value: { args: { searchTerm: "widget install", toolCallId: "call_ws" } } });
    const progress = plan.onResponse({ case: "webSearchRequestResponse", value: create(tools.WebSearchRequestResponseSchema, { result: { case: "approved", value: {} } }) });
    if (progress.kind !== "work") throw new Error(progress.kind);
    const outcome = await progress.run(new AbortController().signal);
    expect(JSON.parse(outcome.content)).toEqual({ search_term: "widget install", results: [{ title: "Widget docs", url: "https://w.example/docs", snippet: "How to widget" }] });
    expect(variantOf(outcome.toolCall, "webSearchToolCall").result?.result).toMatchObject({ case: "success", value: { references: [{ title: "Widget docs", url: "https://w.example/docs", chunk: "How to widget" }] } });
    // A committed result comes back as the same card.
    const reused = plan.reuse?.({ content: outcome.content, isError: false });
    expect(variantOf(reused!.toolCall, "webSearchToolCall").result?.result).toMatchObject({ case: "success", value: { references: [{ url: "https://w.example/docs" }] } });
  });

  it("reports a rejected approval and a backend failure to the model", async () => {
    const plan = webSearch({ search_term: "x" }, { kind: "failed", message: "the search backend answered HTTP 502" });
    if (plan.kind !== "interaction") throw new Error(plan.kind);
    const rejected = plan.onResponse({ case: "webSearchRequestResponse", value: create(tools.WebSearchRequestResponseSchema, { result: { case: "rejected", value: { reason: "" } } }) });
    if (rejected.kind !== "done") throw new Error(rejected.kind);
    expect(rejected.outcome.content).toBe('The user declined the web search for "x".');
    const work = plan.onResponse({ case: "webSearchRequestResponse", value: create(tools.WebSearchRequestResponseSchema, { result: { case: "approved", value: {} } }) });
    if (work.kind !== "work") throw new Error(work.kind);
    expect(await work.run(new AbortController().signal)).toMatchObject({ isError: true, content: "The web search failed: the search backend answered HTTP 502" });
  });

  it("needs a search term", () => {
    expect(invalidOf(webSearch({ search_term: "  " })).error).toMatch(/"search_term" must not be empty/);
  });
});
