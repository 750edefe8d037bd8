import { create } from "@bufbuild/protobuf";
import { tools } from "@byok/cursor-protocol";
import { describe, expect, it } from "vitest";
import { planToolCall } from "./plan-tool-call.ts";
import { invalidOf, testContext, variantOf } from "./tool-test-support.ts";
import { chunkText } from "./web-fetch.ts";
import type { InteractionProgress, ToolPlan } from "./types.ts";
import type { PageOutcome, WebPage, WebTools } from "./web-tools.ts";

const PAGE: WebPage = { contentId: "wp_abc", url: "https://docs.example.com/guide", title: "Guide", markdown: `${"a".repeat(900)}\n${"b".repeat(900)}\n${"c".repeat(300)}` };

function fakeWeb(outcome: PageOutcome = { kind: "page", page: PAGE, fromCache: false }): WebTools & { fetched: string[] } {
  const fetched: string[] = [];
  return {
    fetched,
    fetchEnabled: true,
    searchEnabled: false,
    chunkChars: 1_000,
    page: (_conversation, url) => {
      fetched.push(url);
      return Promise.resolve(outcome);
    },
    storedPage: (conversation, id) => Promise.resolve(conversation === "conv-1" && id === PAGE.contentId ? PAGE : undefined),
    search: () => Promise.resolve({ kind: "failed", message: "no" }),
  };
}

function webFetch(args: object, web: WebTools = fakeWeb()): ToolPlan {
  return planToolCall({ callId: "call_wf", name: "WebFetch", argumentsJson: JSON.stringify(args) }, testContext({ web }));
}

function interaction(plan: ToolPlan) {
  if (plan.kind !== "interaction") throw new Error(plan.kind);
  return plan;
}

const approved = { case: "webFetchRequestResponse" as const, value: create(tools.WebFetchRequestResponseSchema, { result: { case: "approved", value: {} } }) };

async function afterApproval(progress: InteractionProgress) {
  if (progress.kind !== "work") throw new Error(progress.kind);
  return progress.run(new AbortController().signal);
}

describe("WebFetch", () => {
  it("asks for approval with the URL, then fetches on the gateway and returns the first chunk with how to read on", async () => {
    const web = fakeWeb();
    const plan = interaction(webFetch({ url: "https://docs.example.com/guide#install" }, web));
    expect(plan.query).toMatchObject({ case: "webFetchRequestQuery", value: { args: { url: "https://docs.example.com/guide", toolCallId: "call_wf" } } });
    expect(web.fetched).toEqual([]);
    const outcome = await afterApproval(plan.onResponse(approved));
    expect(web.fetched).toEqual(["https://docs.example.com/guide"]);
    expect(outcome.isError).toBe(false);
    expect(outcome.content).toMatch(/^URL: https:\/\/docs\.example\.com\/guide\nTitle: Guide\nContent id: wp_abc \(characters 0-901 of 2102\)\nMore follows: call WebFetch with content_id "wp_abc" and offset 901/);
    expect(variantOf(outcome.toolCall, "webFetchToolCall").result?.result).toMatchObject({ case: "success", value: { url: PAGE.url } });
  });

  it("reads later chunks by content id without approval or fetch, only for pages of this conversation", async () => {
    const web = fakeWeb();
    const plan = webFetch({ url: PAGE.url, content_id: "wp_abc", offset: 901 }, web);
    if (plan.kind !== "server") throw new Error(plan.kind);
    const outcome = await plan.complete();
    expect(web.fetched).toEqual([]);
    expect(outcome.content).toMatch(/Content id: wp_abc \(characters 901-1802 of 2102\)/);
    expect(outcome.content.endsWith(`${"b".repeat(900)}\n`)).toBe(true);
    const unknown = webFetch({ url: PAGE.url, content_id: "wp_other" }, web);
    if (unknown.kind !== "server") throw new Error(unknown.kind);
    expect(await unknown.complete()).toMatchObject({ isError: true, content: expect.stringMatching(/Unknown content_id "wp_other"/) });
  });

  it("completes a rejected approval as rejected and tells the model, without fetching", async () => {
    const web = fakeWeb();
    const plan = interaction(webFetch({ url: "https://example.com/" }, web));
    const progress = plan.onResponse({ case: "webFetchRequestResponse", value: create(tools.WebFetchRequestResponseSchema, { result: { case: "rejected", value: { reason: "private docs" } } }) });
    if (progress.kind !== "done") throw new Error(progress.kind);
    expect(progress.outcome.content).toBe("The user declined fetching https://example.com/: private docs. Do not fetch it again unless the user asks.");
    expect(variantOf(progress.outcome.toolCall, "webFetchToolCall").result?.result).toMatchObject({ case: "rejected", value: { reason: "private docs" } });
    expect(web.fetched).toEqual([]);
  });

  it("turns a policy refusal or a failed fetch into a tool error naming the URL", async () => {
    const refused = await afterApproval(interaction(webFetch({ url: "http://127.0.0.1/" }, fakeWeb({ kind: "refused", message: "127.0.0.1 is a loopback address" }))).onResponse(approved));
    expect(refused).toMatchObject({ isError: true, content: "The gateway does not fetch http://127.0.0.1/: 127.0.0.1 is a loopback address" });
    const failed = await afterApproval(interaction(webFetch({ url: "https://example.com/big" }, fakeWeb({ kind: "failed", message: "the page is larger than the gateway's limit of 10 bytes" }))).onResponse(approved));
    expect(failed.content).toBe("Fetching https://example.com/big failed: the page is larger than the gateway's limit of 10 bytes");
    expect(variantOf(failed.toolCall, "webFetchToolCall").result?.result.case).toBe("error");
  });

  it("refuses malformed URLs before asking anybody", () => {
    expect(invalidOf(webFetch({ url: "not a url" })).error).toBe('Invalid arguments for WebFetch: "url" is not a valid URL: "not a url" (give an absolute http:// or https:// address).');
    expect(invalidOf(webFetch({ url: "file:///etc/passwd" })).error).toMatch(/must be an http:\/\/ or https:\/\/ address, not file:/);
    expect(invalidOf(webFetch({ url: "https://user:pw@example.com/" })).error).toMatch(/must not carry a user name or password/);
    expect(invalidOf(webFetch({})).error).toMatch(/"url" is required/);
  });

  it("reuses a committed result on resume (no approval, no fetch)", () => {
    const plan = interaction(webFetch({ url: "https://example.com/" }));
    const outcome = plan.reuse?.({ content: "URL: https://example.com/\n\nbody", isError: false });
    expect(outcome).toMatchObject({ content: "URL: https://example.com/\n\nbody", isError: false });
  });
});

describe("chunkText", () => {
  it("ends a chunk at a line break near its end and never splits a surrogate pair", () => {
    const page: WebPage = { contentId: "wp_x", url: "u", title: "", markdown: `${"x".repeat(9)}😀tail` };
    const text = chunkText(page, 0, 10);
    expect(text).toContain("(characters 0-9 of 15)");
    expect(chunkText({ ...page, markdown: "" }, 0, 10)).toContain("(The page has no text content.)");
  });
});
