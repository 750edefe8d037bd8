/**
 * End to end: WebFetch and WebSearch run on the gateway after the member
 * approves them in Cursor. A loopback HTTP server stands in for the web (the
 * test egress policy allows 127.0.0.0/8; the default policy refuses it) and
 * for a SearXNG search backend.
 *
 * - approval -> fetch -> a chunked result; the next chunk by content id needs
 *   neither approval nor a new fetch;
 * - a denied host, a redirect to a private address, an oversized page and a
 *   malformed URL each give the model a clear tool error, and the run goes on;
 * - a rejected approval completes the tool as rejected and the model is told;
 * - a fetch whose result was committed is not fetched again when the IDE
 *   resumes the interrupted round;
 * - WebSearch asks the configured backend;
 * - under the default policy loopback is refused, and without a backend
 *   WebSearch is not offered.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { RunStatus } from "@byok/contracts";
import type { tools } from "@byok/cursor-protocol";
import { queryAnswers, type ExecContext } from "@byok/test-support/fake-cursor";
import { startGateway, type GatewayHarness } from "@byok/test-support/gateway-harness";
import { waitFor } from "@byok/test-support/infra";
import { startLoopbackWeb, type LoopbackWeb } from "./agent-support.ts";
import { afterLastUser, chatMessages, textOf, toolNames, type ChatMessage } from "@byok/test-support/chat-requests";
import { completedCard, enqueueChat, execArgs, finishedOk, readSuccess } from "./tools-support.ts";

const CHUNK = 2_000;

/** A documentation page whose text is about three chunks long. */
function docsPage(): string {
  const sections = [1, 2, 3, 4, 5, 6].map((n) => `<h2>Section ${n}</h2><p>${`Widget detail ${n}. `.repeat(45)}</p>`).join("\n");
  return `<!doctype html><html><head><title>Widget docs</title><script>tracker()</script></head><body><nav>Menu</nav><main><h1>Widgets</h1>${sections}</main></body></html>`;
}

function toolText(messages: readonly ChatMessage[], callId: string): string {
  return textOf(messages.find((m) => m.tool_call_id === callId)?.content);
}

describe("web tools end to end", () => {
  let web: LoopbackWeb;
  let gw: GatewayHarness;
  beforeAll(async () => {
    web = await startLoopbackWeb();
    web.route("/docs", (_req, res) => res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(docsPage()));
    web.route("/moved", (_req, res) => res.writeHead(302, { location: "http://192.168.77.1/internal" }).end());
    web.route("/huge", (_req, res) => res.writeHead(200, { "content-type": "text/plain" }).end("z".repeat(60_000)));
    web.route("/search", (req, res) => {
      const q = new URL(req.url ?? "/", "http://x").searchParams.get("q");
      res.writeHead(200, { "content-type": "application/json" }).end(
        JSON.stringify({ query: q, results: [{ title: "Widget docs", url: `${web.origin}/docs`, content: `All about ${q}` }, { title: "Widget FAQ", url: "https://faq.example/widgets", content: "Questions" }] }),
      );
    });
  });
  afterAll(() => web.stop());
  beforeEach(async () => {
    gw = await startGateway({
      configure: (config) => {
        config.web = {
          fetch: { allowNetworks: ["127.0.0.0/8"], denyHosts: ["blocked.example"], maxBytes: 50_000, chunkChars: CHUNK },
          search: { kind: "searxng", url: `${web.origin}/search`, maxResults: 5 },
        };
      },
    });
    web.hits.length = 0;
  });
  afterEach(async () => {
    await gw.stop();
  });

  it("fetches after approval and serves a long page in chunks; the next chunk needs no approval and no fetch", async () => {
    const url = `${web.origin}/docs`;
    enqueueChat(gw, { id: "chatcmpl-web-1", calls: [{ id: "call_fetch_1", name: "WebFetch", args: { url } }] });
    // The model reads on with what the first result told it.
    enqueueChat(gw, (request) => {
      const first = toolText(afterLastUser(chatMessages(request)), "call_fetch_1");
      const contentId = /content_id "([^"]+)" and offset (\d+)/.exec(first);
      return { id: "chatcmpl-web-2", calls: [{ id: "call_fetch_2", name: "WebFetch", args: { url, content_id: contentId?.[1] ?? "?", offset: Number(contentId?.[2] ?? 0) } }] };
    });
    enqueueChat(gw, { id: "chatcmpl-web-3", text: "The docs describe six sections of widget details." });
    const answers = queryAnswers();
    const result = await finishedOk(gw.client().conversation().send("Summarise the widget docs.", { modelId: gw.modelId, onQuery: answers.handler }));
    expect(result.violations, result.describe()).toEqual([]);

    // One approval, one fetch.
    expect(answers.received.map((q) => q.query.case)).toEqual(["webFetchRequestQuery"]);
    const asked = answers.received[0]!.query;
    expect(asked.case === "webFetchRequestQuery" && asked.value.args).toMatchObject({ url, toolCallId: "call_fetch_1" });
    expect(web.hits).toEqual(["/docs"]);

    const requests = gw.llm.requestsTo("openai-chat");
    const first = toolText(afterLastUser(chatMessages(requests[1])), "call_fetch_1");
    expect(first.startsWith(`URL: ${url}\nTitle: Widget docs\nContent id: wp_`)).toBe(true);
    expect(first).toMatch(/\nContent id: wp_[A-Za-z0-9_-]+ \(characters 0-\d+ of \d+\)\nMore follows: call WebFetch with content_id "wp_[A-Za-z0-9_-]+" and offset \d+/);
    expect(first).toContain("# Widgets");
    expect(first).not.toContain("tracker()");
    expect(first).not.toContain("Menu");
    const second = toolText(afterLastUser(chatMessages(requests[2])), "call_fetch_2");
    const [, end1] = /characters 0-(\d+) of/.exec(first) ?? [];
    expect(second).toMatch(new RegExp(`characters ${end1}-\\d+ of`));
    expect(second).toContain("Section 4");
    expect(first).not.toContain("Section 4");
    expect(second.length).toBeLessThan(CHUNK + 400);

    // The cards: success with the page's text.
    const card = completedCard(result, "call_fetch_1");
    expect(card?.tool.case === "webFetchToolCall" && card.tool.value.result?.result).toMatchObject({ case: "success", value: { url } });
  });

  it("gives clear tool errors for a denied host, a redirect to a private address, an oversized page and a malformed URL, and the run goes on", async () => {
    enqueueChat(gw, {
      id: "chatcmpl-web-err-1",
      calls: [
        { id: "call_denied", name: "WebFetch", args: { url: `http://blocked.example:${web.port}/docs` } },
        { id: "call_redirect", name: "WebFetch", args: { url: `${web.origin}/moved` } },
        { id: "call_huge", name: "WebFetch", args: { url: `${web.origin}/huge` } },
        { id: "call_bad_url", name: "WebFetch", args: { url: "htp//docs" } },
      ],
    });
    enqueueChat(gw, { id: "chatcmpl-web-err-2", text: "None of those pages could be read." });
    const answers = queryAnswers();
    const result = await finishedOk(gw.client().conversation().send("Read these pages.", { modelId: gw.modelId, onQuery: answers.handler }));
    expect(result.text).toBe("None of those pages could be read.");
    // The malformed URL was refused before anybody was asked.
    expect(answers.received).toHaveLength(3);
    const loop = afterLastUser(chatMessages(gw.llm.requestsTo("openai-chat")[1]));
    expect(toolText(loop, "call_denied")).toBe(`The gateway does not fetch http://blocked.example:${web.port}/docs: the host blocked.example is denied by the gateway's policy`);
    expect(toolText(loop, "call_redirect")).toBe(`The gateway does not fetch ${web.origin}/moved: 192.168.77.1 is a private address, which the gateway does not connect to`);
    expect(toolText(loop, "call_huge")).toBe(`Fetching ${web.origin}/huge failed: the page is larger than the gateway's limit of 50000 bytes`);
    expect(toolText(loop, "call_bad_url")).toBe('Invalid arguments for WebFetch: "url" is not a valid URL: "htp//docs" (give an absolute http:// or https:// address).');
    for (const id of ["call_denied", "call_redirect", "call_huge", "call_bad_url"]) {
      const card = completedCard(result, id);
      expect(card?.tool.case === "webFetchToolCall" && card.tool.value.result?.result.case, id).toBe("error");
    }
    // The denied host was never contacted; the redirect was not followed.
    expect(web.hits.sort()).toEqual(["/huge", "/moved"]);
  });

  it("completes a rejected approval as rejected and tells the model, without fetching", async () => {
    enqueueChat(gw, { id: "chatcmpl-web-rej-1", calls: [{ id: "call_rejected", name: "WebFetch", args: { url: `${web.origin}/docs` } }] });
    enqueueChat(gw, { id: "chatcmpl-web-rej-2", text: "Understood, I will not fetch it." });
    const answers = queryAnswers({ webFetch: { reject: "internal page" } });
    const result = await finishedOk(gw.client().conversation().send("Check the docs page.", { modelId: gw.modelId, onQuery: answers.handler }));
    expect(web.hits).toEqual([]);
    const loop = afterLastUser(chatMessages(gw.llm.requestsTo("openai-chat")[1]));
    expect(toolText(loop, "call_rejected")).toBe(`The user declined fetching ${web.origin}/docs: internal page. Do not fetch it again unless the user asks.`);
    const card = completedCard(result, "call_rejected");
    expect(card?.tool.case === "webFetchToolCall" && card.tool.value.result?.result).toMatchObject({ case: "rejected", value: { reason: "internal page" } });
  });

  it("does not fetch again on resume when the fetch's result was committed", async () => {
    enqueueChat(gw, {
      id: "chatcmpl-web-res-1",
      calls: [
        // Arguments as the model wrote them (spaced): the resumed round must recognise the same call.
        { id: "call_res_fetch", name: "WebFetch", args: `{ "url": "${web.origin}/docs" }` },
        { id: "call_res_read", name: "Read", args: { path: "/home/dev/project/notes.md" } },
      ],
    });
    const chat = gw.client().conversation();
    let readArrived!: () => void;
    const readHeld = new Promise<void>((resolve) => (readArrived = resolve));
    const answers = queryAnswers();
    // The Read is never answered in turn 1: the IDE goes away while it runs.
    const first = chat.send("Compare the docs with my notes.", { modelId: gw.modelId, onQuery: answers.handler, onExec: { readArgs: () => readArrived() } });
    await readHeld;
    await waitFor(async () => (await gw.sql("SELECT 1 FROM tool_results WHERE call_id = 'call_res_fetch'")).length === 1, "the fetch result committed");
    await first.waitForFrame((m) => m.message.case === "conversationCheckpointUpdate" && m.message.value.pendingToolCalls.length === 1, "the staged checkpoint");
    first.disconnect();
    const dropped = await first.finished;
    await waitFor(async () => (await gw.store("getRun", { runId: dropped.requestId })).run?.status === RunStatus.CANCELLED, "turn 1 cancelled");
    expect(web.hits).toEqual(["/docs"]);
    expect(answers.received).toHaveLength(1);

    // ---- the IDE resumes the staged round: the Read runs again, the fetch is not repeated ----
    enqueueChat(gw, { id: "chatcmpl-web-res-2", text: "The notes match the docs." });
    const resumed = await finishedOk(
      chat.resume({
        modelId: gw.modelId,
        onQuery: answers.handler,
        onExec: {
          readArgs: async (ctx: ExecContext) => {
            const { path } = execArgs<tools.ReadArgs>(ctx);
            await ctx.reply(readSuccess(path, "notes\n"));
          },
        },
      }),
    );
    expect(resumed.text).toBe("The notes match the docs.");
    expect(web.hits).toEqual(["/docs"]);
    expect(answers.received).toHaveLength(1);
    const loop = afterLastUser(chatMessages(gw.llm.requestsTo("openai-chat")[1]));
    expect(toolText(loop, "call_res_fetch")).toContain("# Widgets");
    const card = completedCard(resumed, "call_res_fetch");
    expect(card?.tool.case === "webFetchToolCall" && card.tool.value.result?.result.case).toBe("success");
  });

  it("searches through the configured SearXNG backend after approval", async () => {
    enqueueChat(gw, { id: "chatcmpl-search-1", calls: [{ id: "call_search", name: "WebSearch", args: { search_term: "widget sizes" } }] });
    enqueueChat(gw, { id: "chatcmpl-search-2", text: "The widget docs cover sizes." });
    const answers = queryAnswers();
    const result = await finishedOk(gw.client().conversation().send("What sizes do widgets come in?", { modelId: gw.modelId, onQuery: answers.handler }));
    expect(answers.received.map((q) => q.query.case)).toEqual(["webSearchRequestQuery"]);
    expect(web.hits).toEqual(["/search?q=widget+sizes&format=json"]);
    const loop = afterLastUser(chatMessages(gw.llm.requestsTo("openai-chat")[1]));
    expect(JSON.parse(toolText(loop, "call_search"))).toEqual({
      search_term: "widget sizes",
      results: [
        { title: "Widget docs", url: `${web.origin}/docs`, snippet: "All about widget sizes" },
        { title: "Widget FAQ", url: "https://faq.example/widgets", snippet: "Questions" },
      ],
    });
    const card = completedCard(result, "call_search");
    expect(card?.tool.case === "webSearchToolCall" && card.tool.value.result?.result).toMatchObject({ case: "success", value: { references: [{ title: "Widget docs" }, { title: "Widget FAQ" }] } });
  });
});

describe("web tools under the default configuration", () => {
  let gw: GatewayHarness;
  let web: LoopbackWeb;
  beforeEach(async () => {
    web = await startLoopbackWeb();
    web.route("/", (_req, res) => res.end("private"));
    gw = await startGateway();
  });
  afterEach(async () => {
    await gw.stop();
    await web.stop();
  });

  it("refuses loopback, and offers no WebSearch without a backend", async () => {
    enqueueChat(gw, { id: "chatcmpl-default-1", calls: [{ id: "call_local", name: "WebFetch", args: { url: `${web.origin}/` } }] });
    enqueueChat(gw, { id: "chatcmpl-default-2", text: "That address is not reachable." });
    await finishedOk(gw.client().conversation().send("Fetch my local server.", { modelId: gw.modelId, onQuery: queryAnswers().handler }));
    const requests = gw.llm.requestsTo("openai-chat");
    expect(toolText(afterLastUser(chatMessages(requests[1])), "call_local")).toBe(
      `The gateway does not fetch ${web.origin}/: 127.0.0.1 is a loopback address, which the gateway does not connect to`,
    );
    expect(web.hits).toEqual([]);
    expect(toolNames(requests[0]!.body)).toContain("WebFetch");
    expect(toolNames(requests[0]!.body)).not.toContain("WebSearch");
  });
});
