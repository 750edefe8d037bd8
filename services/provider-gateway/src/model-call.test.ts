/**
 * One model call end to end against the mock LLM: retries only before the
 * first streamed byte (honouring Retry-After), typed failures for HTTP and
 * connection errors, and cancellation that reaches the upstream request both
 * while waiting for headers and while streaming. Waits before a retry run on
 * a manual clock; nothing here sleeps.
 */
import { createServer } from "node:net";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ModelFailureKind, type ModelRequest } from "@byok/contracts";
import { silentLogger } from "@byok/platform";
import { startMockLlm, type MockLlm } from "@byok/test-support/mock-llm";
import { providerFixture } from "@byok/test-support/fixtures";
import { waitFor } from "@byok/test-support/infra";
import { ManualClock } from "@byok/test-support/manual-clock";
import { adapterFor } from "./adapters/index.ts";
import { runModelCall } from "./model-call.ts";
import type { Route } from "./routes.ts";
import { callThroughMock, modelRequest, testRoute, userText } from "./testing/call-kit.ts";

let llm: MockLlm;
beforeEach(async () => {
  llm = await startMockLlm();
});
afterEach(async () => {
  await llm.stop();
});

const textFixture = providerFixture("openai-chat", "openai-gpt4o-text-usage.sse");
const anthropicText = providerFixture("anthropic", "anthropic-sonnet45-text.jsonl");

function chatRoute(maxAttempts: number, overrides = {}) {
  return testRoute("openai-chat", llm, { maxAttempts, ...overrides });
}

type EmittedEvent = Parameters<Parameters<typeof runModelCall>[2]>[0];

/** One call through the real adapter whose waits before a retry run on `clock`; resolves with the events emitted. */
async function callOnClock(route: Route, request: ModelRequest, clock: ManualClock, signal = new AbortController().signal): Promise<EmittedEvent[]> {
  const events: EmittedEvent[] = [];
  await runModelCall(adapterFor(route.kind).bind(route, silentLogger()), request, (e) => events.push(e), { signal, log: silentLogger(), clock });
  return events;
}

describe("retries before the first byte", () => {
  it("retries a 429 after the Retry-After the endpoint asked for", async () => {
    const clock = new ManualClock();
    const route = chatRoute(3);
    llm.enqueue({ kind: "error", endpoint: "openai-chat", status: 429, retryAfter: "1", body: { error: { message: "Rate limit reached", type: "requests", code: "rate_limit_exceeded" } } });
    llm.enqueue({ kind: "fixture", file: textFixture });
    const call = callOnClock(route, modelRequest({ route, messages: [userText("hi")] }), clock);
    await clock.whenTimers(1);
    expect(clock.pendingDelays()).toEqual([1000]);
    await clock.advance(999);
    expect(llm.requests).toHaveLength(1);
    await clock.advance(1);
    const events = await call;
    expect(events.at(-1)?.case).toBe("done");
    const [first, second] = llm.requests;
    expect(llm.requests).toHaveLength(2);
    expect(second?.rawBody).toBe(first?.rawBody);
  });

  it("retries an Anthropic 529 overload, then succeeds", async () => {
    const route = testRoute("anthropic", llm, { maxAttempts: 2 });
    llm.enqueue({ kind: "error", endpoint: "anthropic", status: 529, body: { type: "error", error: { type: "overloaded_error", message: "Overloaded" } } });
    const { summary } = await callThroughMock(llm, route, modelRequest({ route, messages: [userText("hi")] }), { kind: "fixture", file: anthropicText });
    expect(summary.outcome).toBe("ok");
    expect(llm.requests).toHaveLength(2);
  });

  it("gives up after maxAttempts with a retryable failure carrying the status", async () => {
    const route = chatRoute(3);
    for (let i = 0; i < 3; i++) llm.enqueue({ kind: "error", endpoint: "openai-chat", status: 503, body: { error: { message: "upstream unavailable" } } });
    const { summary } = await callThroughMock(llm, route, modelRequest({ route, messages: [userText("hi")] }));
    expect(summary.failure).toMatchObject({ kind: "PROVIDER_ERROR", retryable: true, httpStatus: 503 });
    expect(summary.failure?.message).toContain("upstream unavailable");
    expect(llm.requests).toHaveLength(3);
  });

  it("does not retry a 400 or a 401", async () => {
    const route = chatRoute(3);
    llm.enqueue({ kind: "error", endpoint: "openai-chat", status: 400, body: { error: { message: "bad param", code: "invalid_value" } } });
    const bad = await callThroughMock(llm, route, modelRequest({ route, messages: [userText("hi")] }));
    expect(bad.summary.failure).toMatchObject({ kind: "PROVIDER_ERROR", retryable: false, httpStatus: 400, providerCode: "invalid_value" });
    llm.enqueue({ kind: "error", endpoint: "openai-chat", status: 401, body: { error: { message: "Incorrect API key" } } });
    const auth = await callThroughMock(llm, route, modelRequest({ route, messages: [userText("hi")] }));
    expect(auth.summary.failure).toMatchObject({ kind: "AUTH", httpStatus: 401 });
    expect(llm.requests).toHaveLength(2);
  });

  it("does not retry once the stream has started, even on a dropped connection", async () => {
    const route = chatRoute(3);
    llm.enqueue({ kind: "fixture", file: textFixture, disconnectAfterEvents: 3 });
    llm.enqueue({ kind: "fixture", file: textFixture });
    const { summary } = await callThroughMock(llm, route, modelRequest({ route, messages: [userText("hi")] }));
    expect(summary.failure?.kind).toBe("TRUNCATED");
    expect(summary.failure?.partialText.length).toBeGreaterThan(0);
    expect(llm.requests).toHaveLength(1);
    expect(llm.pending("openai-chat")).toBe(1);
  });

  it("does not wait for a Retry-After longer than the configured maximum", async () => {
    const route = chatRoute(3);
    llm.enqueue({ kind: "error", endpoint: "openai-chat", status: 429, retryAfter: "3600", body: { error: { message: "quota" } } });
    const { summary } = await callThroughMock(llm, route, modelRequest({ route, messages: [userText("hi")] }));
    expect(summary.failure).toMatchObject({ kind: "RATE_LIMITED", retryable: true, httpStatus: 429 });
    expect(llm.requests).toHaveLength(1);
  });

  it("an unreachable endpoint is UNAVAILABLE after the attempts", async () => {
    const port = await closedPort();
    const route = testRoute("openai-chat", llm, { baseUrl: `http://127.0.0.1:${port}/v1`, maxAttempts: 2 });
    const { summary } = await callThroughMock(llm, route, modelRequest({ route, messages: [userText("hi")] }));
    expect(summary.failure).toMatchObject({ kind: "UNAVAILABLE", retryable: true });
    expect(summary.failure?.message).toContain("after 2 attempts");
  });

  it("headers that do not come within the route's timeout are UNAVAILABLE", async () => {
    const route = chatRoute(1, { headersTimeoutMs: 300 });
    const { summary } = await callThroughMock(llm, route, modelRequest({ route, messages: [userText("hi")] }), { kind: "fixture", file: textFixture, holdHeaders: true });
    expect(summary.failure?.kind).toBe("UNAVAILABLE");
    await waitFor(() => llm.requests[0]?.aborted, "the mock to see the timed-out request go away");
  });
});

describe("timeouts", () => {
  for (const kind of ["openai-chat", "anthropic"] as const) {
    it(`${kind}: the headers timeout does not cut a stream that runs longer`, async () => {
      const route = testRoute(kind, llm, { headersTimeoutMs: 300 });
      const file = kind === "anthropic" ? anthropicText : textFixture;
      const handle = llm.enqueue({ kind: "fixture", file, holdAfterEvents: 3 });
      const call = callThroughMock(llm, route, modelRequest({ route, messages: [userText("hi")] }));
      await handle.held;
      // A witness: a call with the same headers timeout, started after the first one and never
      // answered. Once it has timed out, the first call's headers timeout has passed too.
      const witness = await callThroughMock(llm, route, modelRequest({ route, messages: [userText("hi")] }), { kind: "fixture", file, holdHeaders: true });
      expect(witness.summary.failure?.kind).toBe("UNAVAILABLE");
      handle.release();
      expect((await call).summary.outcome).toBe("ok");
    });
  }
});

describe("cancellation", () => {
  it("aborts the upstream request while waiting for response headers", async () => {
    const route = chatRoute(1);
    const handle = llm.enqueue({ kind: "fixture", file: textFixture, holdHeaders: true });
    const cancel = new AbortController();
    const call = callThroughMock(llm, route, modelRequest({ route, messages: [userText("hi")] }), undefined, { signal: cancel.signal });
    await handle.held;
    cancel.abort();
    const { summary, events } = await call;
    expect(summary.failure?.kind).toBe("CANCELLED");
    expect(events.some((e) => e.case === "start")).toBe(false);
    await waitFor(() => llm.requests[0]?.aborted, "the mock to see the request aborted");
  });

  it("aborts the upstream request while streaming and keeps the partial text", async () => {
    const route = testRoute("anthropic", llm);
    const handle = llm.enqueue({ kind: "fixture", file: anthropicText, holdAfterEvents: 5 });
    const cancel = new AbortController();
    let streamed = "";
    const call = callThroughMock(llm, route, modelRequest({ route, messages: [userText("hi")] }), undefined, {
      signal: cancel.signal,
      onEvent: (e) => {
        if (e.case === "textDelta") streamed += e.value.text ?? "";
      },
    });
    await handle.held;
    await waitFor(() => streamed === "Hello! I", "the first deltas to reach the caller");
    cancel.abort();
    const { summary } = await call;
    expect(summary.failure?.kind).toBe("CANCELLED");
    expect(summary.failure?.partialText).toBe("Hello! I");
    await waitFor(() => llm.requests[0]?.aborted, "the mock to see the stream aborted");
  });

  it("stops waiting for a Retry-After when cancelled", async () => {
    const clock = new ManualClock();
    const route = chatRoute(3);
    llm.enqueue({ kind: "error", endpoint: "openai-chat", status: 429, retryAfter: "30", body: { error: { message: "later" } } });
    const cancel = new AbortController();
    const call = callOnClock(route, modelRequest({ route, messages: [userText("hi")] }), clock, cancel.signal);
    await clock.whenTimers(1);
    expect(clock.pendingDelays()).toEqual([30_000]);
    cancel.abort();
    // The call ends although the clock never moved, and its wait is gone.
    const events = await call;
    expect(events.at(-1)).toMatchObject({ case: "failure", value: { kind: ModelFailureKind.CANCELLED } });
    expect(clock.pendingDelays()).toEqual([]);
    expect(llm.requests).toHaveLength(1);
  });
});

describe("requests the route cannot take", () => {
  it("are CONFIG failures and never reach the endpoint", async () => {
    const route = testRoute("anthropic", llm, { maxOutputTokens: undefined });
    const { summary } = await callThroughMock(llm, route, modelRequest({ route, messages: [userText("hi")] }));
    expect(summary.failure?.kind).toBe("CONFIG");
    expect(summary.failure?.message).toContain("max_tokens");
    expect(llm.requests).toHaveLength(0);
  });
});

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const address = server.address();
  const port = typeof address === "object" && address !== null ? address.port : 0;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
