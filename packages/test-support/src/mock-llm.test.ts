import { readFileSync } from "node:fs";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { PROVIDER_FIXTURES_DIR } from "./fixtures.ts";
import { startMockLlm, type MockLlm } from "./mock-llm.ts";
import { waitFor } from "./infra.ts";

const FIXTURES = PROVIDER_FIXTURES_DIR;

describe("mock LLM", () => {
  let llm: MockLlm;
  beforeEach(async () => {
    llm = await startMockLlm();
  });
  afterEach(async () => {
    await llm.stop();
  });

  it("serves an .sse fixture byte for byte and records the request", async () => {
    const file = `${FIXTURES}/anthropic/anthropic-sonnet45-redacted-thinking.sse`;
    llm.enqueue({ kind: "fixture", file });
    const res = await fetch(`${llm.baseUrl("anthropic")}/v1/messages?beta=true`, { method: "POST", body: JSON.stringify({ model: "m" }), headers: { "x-api-key": "k" } });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe(readFileSync(file, "utf8"));
    expect(llm.requests).toHaveLength(1);
    expect(llm.requests[0]?.path).toBe("/v1/messages");
    expect(llm.requests[0]?.body).toEqual({ model: "m" });
    expect(llm.requests[0]?.headers["x-api-key"]).toBe("k");
    expect(llm.requests[0]?.aborted).toBe(false);
  });

  it("frames .jsonl chat recordings as data lines with [DONE] only after a finish_reason", async () => {
    const file = `${FIXTURES}/openai-chat/azure-gpt5nano-prompt-filter-prelude.jsonl`;
    llm.enqueue({ kind: "fixture", file });
    llm.enqueue({ kind: "chunks", endpoint: "openai-chat", chunks: [{ error: { message: "boom" } }] });
    const first = await (await fetch(`${llm.baseUrl("openai-chat")}/chat/completions`, { method: "POST", body: "{}" })).text();
    const lines = readFileSync(file, "utf8").split("\n").filter((l) => l !== "");
    expect(first).toBe(lines.map((l) => `data: ${l}\n\n`).join("") + "data: [DONE]\n\n");
    const second = await (await fetch(`${llm.baseUrl("openai-chat")}/chat/completions`, { method: "POST", body: "{}" })).text();
    expect(second).toBe('data: {"error":{"message":"boom"}}\n\n');
  });

  it("adds event lines named after the payload type for Responses and Anthropic .jsonl", async () => {
    const file = `${FIXTURES}/anthropic/anthropic-sonnet45-text.jsonl`;
    llm.enqueue({ kind: "fixture", file });
    const body = await (await fetch(`${llm.url}/v1/messages`, { method: "POST", body: "{}" })).text();
    const lines = readFileSync(file, "utf8").split("\n").filter((l) => l !== "");
    expect(body).toBe(lines.map((l) => `event: ${(JSON.parse(l) as { type: string }).type}\ndata: ${l}\n\n`).join(""));
  });

  it("answers 500 with a clear message when nothing is queued, and errors with Retry-After", async () => {
    const empty = await fetch(`${llm.url}/v1/responses`, { method: "POST", body: "{}" });
    expect(empty.status).toBe(500);
    expect(await empty.text()).toContain("no response queued for POST /v1/responses");
    llm.enqueue({ kind: "error", endpoint: "openai-responses", status: 429, retryAfter: "2", body: { error: { message: "slow down" } } });
    const limited = await fetch(`${llm.url}/v1/responses`, { method: "POST", body: "{}" });
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).toBe("2");
    expect(await limited.json()).toEqual({ error: { message: "slow down" } });
  });

  it("holds after N events until released, and records a client abort", async () => {
    const handle = llm.enqueue({ kind: "sse", endpoint: "openai-chat", body: "data: 1\n\ndata: 2\n\n", holdAfterEvents: 1 });
    const controller = new AbortController();
    const res = await fetch(`${llm.url}/v1/chat/completions`, { method: "POST", body: "{}", signal: controller.signal });
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toBe("data: 1\n\n");
    await handle.held;
    controller.abort();
    await waitFor(() => llm.requests[0]?.aborted, "the mock to see the abort");
  });

  it("keeps a fixed schedule with eventEveryMs: events that fell behind a busy moment are sent at once, the rest on time", async () => {
    const body = Array.from({ length: 11 }, (_, i) => `data: ${i}\n\n`).join("");
    llm.enqueue({ kind: "sse", endpoint: "openai-chat", body, eventEveryMs: 20 });
    const res = await fetch(`${llm.url}/v1/chat/completions`, { method: "POST", body: "{}" });
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    let received = "";
    const first = await reader.read();
    received += new TextDecoder().decode(first.value);
    const firstAt = performance.now();
    // The process (client and mock alike) is busy for 150 ms right after the first event: events 1-7 fall due meanwhile.
    let spins = 0;
    while (performance.now() < firstAt + 150) spins += 1;
    expect(spins).toBeGreaterThan(0);
    for (;;) {
      const next = await reader.read();
      if (next.done) break;
      received += new TextDecoder().decode(next.value);
    }
    const lastAt = performance.now();
    expect(received).toBe(body);
    // On its own clock the last event is due 200 ms after the first; waiting 20 ms after each event
    // instead (eventIntervalMs) would end no earlier than 150 + 9 * 20 = 330 ms after it.
    expect(lastAt - firstAt).toBeGreaterThanOrEqual(180);
    expect(lastAt - firstAt).toBeLessThan(300);
  });

  it("disconnects after N events and can end the body early", async () => {
    llm.enqueue({ kind: "sse", endpoint: "openai-chat", body: "data: 1\n\ndata: 2\n\n", disconnectAfterEvents: 1 });
    llm.enqueue({ kind: "sse", endpoint: "openai-chat", body: "data: 1\n\ndata: 2\n\n", endAfterEvents: 1 });
    const cut = await fetch(`${llm.url}/v1/chat/completions`, { method: "POST", body: "{}" });
    await expect(cut.text()).rejects.toThrow();
    const ended = await fetch(`${llm.url}/v1/chat/completions`, { method: "POST", body: "{}" });
    expect(await ended.text()).toBe("data: 1\n\n");
    expect(llm.requests.map((r) => r.aborted)).toEqual([false, false]);
  });
});
