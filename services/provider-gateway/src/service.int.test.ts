/**
 * The provider gateway as the run worker sees it: startProviderGateway on a
 * real NATS bus (own prefix) in front of the mock LLM. ModelEvent frames with
 * contiguous seq from 1, exactly one terminal, keepalives while the endpoint
 * is silent, cancel over the bus reaching the upstream request, CONFIG for an
 * unknown model, and the key from the env var sent upstream but never logged.
 */
import { Writable } from "node:stream";
import { create, toBinary, type MessageInitShape } from "@bufbuild/protobuf";
import { busNames, CALLER_PROBE_HEADER, decodeModelEventFrame, ModelFailureKind, ModelRequestSchema, parseProviderCallId, type ModelEvent } from "@byok/contracts";
import { connect, createInbox, type NatsConnection } from "@nats-io/transport-node";
import { pino } from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createTestBus, waitFor, type TestBus } from "@byok/test-support/infra";
import { startMockLlm, type MockLlm } from "@byok/test-support/mock-llm";
import { providerFixture } from "@byok/test-support/fixtures";
import { loadConfig } from "./config.ts";
import type { AccountingTicket, CallAccounting, CallAdmission, CallUsage } from "./accounting/call-accounting.ts";
import { startProviderGateway, type ProviderGateway, type ProviderGatewayOverrides } from "./service.ts";
import { expectationFor } from "./testing/fixture-oracle.ts";

const KEY = "sk-test-9f8e7d6c5b4a-not-a-real-key";

let bus: TestBus;
let llm: MockLlm;
let nc: NatsConnection;
let gateway: ProviderGateway | undefined;
let logText: string;

beforeEach(async () => {
  bus = createTestBus();
  llm = await startMockLlm();
  nc = await connect({ servers: bus.natsUrl });
  logText = "";
});
afterEach(async () => {
  await gateway?.stop();
  gateway = undefined;
  await nc.close();
  await llm.stop();
  await bus.cleanup();
});

async function startGateway(env: Record<string, string> = {}, overrides: Pick<ProviderGatewayOverrides, "accounting"> = {}): Promise<void> {
  const gatewayFile = JSON.stringify({
    providers: { openai: { kind: "openai-chat", baseUrl: llm.baseUrl("openai-chat"), apiKeyEnv: "TEAM_OPENAI_KEY", maxAttempts: 1, headersTimeoutMs: 30_000 } },
    models: [{ id: "team-gpt", displayName: "Team GPT", provider: "openai", upstreamModel: "gpt-4o", contextWindow: 128_000 }],
  });
  const config = loadConfig({ NATS_URL: bus.natsUrl, BUS_PREFIX: bus.prefix, TEAM_OPENAI_KEY: KEY, ACCOUNTING: "off", ...env }, () => gatewayFile);
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logText += chunk.toString();
      done();
    },
  });
  gateway = await startProviderGateway(config, { log: pino({ level: "debug" }, sink), ...overrides });
}

interface Invocation {
  readonly frames: ModelEvent[];
  readonly ended: Promise<ModelEvent[]>;
  /** Caller probes answered so far. */
  probes(): number;
  /** The caller goes away: its inbox has no subscriber any more. */
  leave(): void;
}

function invoke(request: MessageInitShape<typeof ModelRequestSchema>): Invocation {
  const names = busNames(bus.prefix);
  const inbox = createInbox();
  const frames: ModelEvent[] = [];
  let probes = 0;
  let resolveEnded: (frames: ModelEvent[]) => void = () => undefined;
  const ended = new Promise<ModelEvent[]>((resolve) => (resolveEnded = resolve));
  const sub = nc.subscribe(inbox, {
    callback: (_err, msg) => {
      // A caller probe: answered like the run worker does; not a frame.
      if (msg.headers?.has(CALLER_PROBE_HEADER) === true) {
        probes += 1;
        msg.respond();
        return;
      }
      for (const frame of decodeModelEventFrame(msg.data)) {
        frames.push(frame);
        if (frame.event.case === "done" || frame.event.case === "failure") resolveEnded(frames);
      }
    },
  });
  nc.publish(names.providerInvoke, toBinary(ModelRequestSchema, create(ModelRequestSchema, request)), { reply: inbox });
  return { frames, ended, probes: () => probes, leave: () => sub.unsubscribe() };
}

function chatRequest(callId: string, modelId = "team-gpt"): MessageInitShape<typeof ModelRequestSchema> {
  return {
    callId,
    runId: "run-nats",
    conversationId: "conv-nats",
    memberId: "member-1",
    spec: { modelId },
    prompt: { mode: "agent", systemText: "Be brief." },
    messages: [{ body: { case: "user", value: { content: [{ part: { case: "text", value: { text: "What's the weather?" } } }] } } }],
  };
}

function expectContiguous(frames: readonly ModelEvent[]): void {
  expect(frames.map((f) => f.seq)).toEqual(frames.map((_, i) => BigInt(i + 1)));
  expect(frames.filter((f) => f.event.case === "done" || f.event.case === "failure")).toHaveLength(1);
}

describe("provider gateway on the bus", () => {
  it("streams a call as ModelEvent frames with contiguous seq, sending the configured key upstream", async () => {
    await startGateway();
    const file = providerFixture("openai-chat", "openai-gpt4o-text-usage.sse");
    llm.enqueue({ kind: "fixture", file });
    const frames = await invoke(chatRequest("run-nats:1")).ended;
    expectContiguous(frames);
    expect(frames[0]?.event).toMatchObject({ case: "start", value: { providerKind: "openai-chat", routeId: "team-gpt", upstreamModel: "gpt-4o" } });
    expect(frames.at(-1)?.event.case).toBe("done");
    const text = frames.map((f) => (f.event.case === "textDelta" ? f.event.value.text : "")).join("");
    expect(text).toBe(expectationFor("openai-chat", file).text);
    expect(llm.requests[0]?.headers["authorization"]).toBe(`Bearer ${KEY}`);
    expect(logText).toContain("model call ended");
    expect(logText).not.toContain(KEY);
    expect(logText).not.toContain("What's the weather?");
  });

  it("answers an unknown model id with one CONFIG failure", async () => {
    await startGateway();
    const frames = await invoke(chatRequest("run-nats:2", "no-such-model")).ended;
    expect(frames).toHaveLength(1);
    expect(frames[0]?.seq).toBe(1n);
    expect(frames[0]?.event).toMatchObject({ case: "failure", value: { kind: ModelFailureKind.CONFIG } });
    expect(llm.requests).toHaveLength(0);
  });

  it("cancels the upstream request on a message to the call's cancel subject", async () => {
    await startGateway();
    const handle = llm.enqueue({ kind: "fixture", file: providerFixture("openai-chat", "openai-gpt4o-text-usage.sse"), holdAfterEvents: 4 });
    const call = invoke(chatRequest("run-nats:3"));
    await handle.held;
    await waitFor(() => call.frames.some((f) => f.event.case === "textDelta"), "the first text delta on the bus");
    nc.publish(busNames(bus.prefix).providerCancel(parseProviderCallId("run-nats:3")));
    const frames = await call.ended;
    expectContiguous(frames);
    expect(frames.at(-1)?.event).toMatchObject({ case: "failure", value: { kind: ModelFailureKind.CANCELLED } });
    await waitFor(() => llm.requests[0]?.aborted, "the mock to see the upstream request aborted");
  });

  it("cancels a call whose cancel follows its request at once (before the call could have subscribed to anything)", async () => {
    // No caller probe within the test's time: only the cancel can end this call.
    await startGateway({ PROVIDER_CALLER_PROBE_MS: "600000", PROVIDER_KEEPALIVE_MS: "600000" });
    llm.enqueue({ kind: "fixture", file: providerFixture("openai-chat", "openai-gpt4o-text-usage.sse"), holdHeaders: true });
    const call = invoke(chatRequest("run-nats:5"));
    nc.publish(busNames(bus.prefix).providerCancel(parseProviderCallId("run-nats:5")));
    const frames = await call.ended;
    expectContiguous(frames);
    expect(frames.at(-1)?.event).toMatchObject({ case: "failure", value: { kind: ModelFailureKind.CANCELLED } });
    for (const request of llm.requests) await waitFor(() => request.aborted, "a started upstream request to be aborted");
  });

  it("sends keepalives while the endpoint has not answered; caller probes in between are not frames", async () => {
    await startGateway({ PROVIDER_KEEPALIVE_MS: "100", PROVIDER_CALLER_PROBE_MS: "40" });
    const handle = llm.enqueue({ kind: "fixture", file: providerFixture("openai-chat", "openai-gpt4o-text-usage.sse"), holdHeaders: true });
    const call = invoke(chatRequest("run-nats:4"));
    await handle.held;
    await waitFor(() => call.frames.filter((f) => f.event.case === "keepalive").length >= 2, "two keepalive frames");
    await waitFor(() => call.probes() >= 3, "caller probes");
    handle.release();
    const frames = await call.ended;
    expectContiguous(frames);
    expect(frames.at(-1)?.event.case).toBe("done");
    expect(llm.requests[0]?.aborted).toBe(false);
  });

  it("aborts the upstream request once the caller is gone (nobody answers its probes)", async () => {
    await startGateway({ PROVIDER_CALLER_PROBE_MS: "100" });
    const handle = llm.enqueue({ kind: "fixture", file: providerFixture("openai-chat", "openai-gpt4o-text-usage.sse"), holdAfterEvents: 4 });
    const call = invoke(chatRequest("run-nats:6"));
    await handle.held;
    await waitFor(() => call.frames.some((f) => f.event.case === "textDelta"), "the first text delta on the bus");
    // While the caller answers, the call goes on.
    await waitFor(() => call.probes() >= 2, "two caller probes answered");
    expect(llm.requests[0]?.aborted).toBe(false);
    call.leave();
    await waitFor(() => llm.requests[0]?.aborted === true, "the mock to see the upstream request aborted", 10_000);
    await waitFor(() => gateway?.inFlight() === 0, "the call to end on the gateway");
    expect(logText).toContain("the caller of the model call is gone");
  });

  it("ends calls in flight with a retryable UNAVAILABLE when it stops", async () => {
    await startGateway();
    const handle = llm.enqueue({ kind: "fixture", file: providerFixture("openai-chat", "openai-gpt4o-text-usage.sse"), holdHeaders: true });
    const call = invoke(chatRequest("run-nats:5"));
    await handle.held;
    await gateway?.stop();
    gateway = undefined;
    const frames = await call.ended;
    expect(frames.at(-1)?.event).toMatchObject({ case: "failure", value: { kind: ModelFailureKind.UNAVAILABLE, retryable: true } });
  });
});

describe("call accounting on the bus path", () => {
  it("admits the call with the run's call reference and settles it with the provider-reported usage", async () => {
    const admitted: CallAdmission[] = [];
    const settled: Array<{ ticket: AccountingTicket; usage: CallUsage | undefined }> = [];
    const accounting: CallAccounting = {
      admit: async (call) => {
        admitted.push(call);
        return { kind: "admitted", ticket: { admission: call, lease: "lease-1" } };
      },
      settle: async (ticket, usage) => {
        settled.push({ ticket, usage });
      },
    };
    await startGateway({}, { accounting });
    const file = providerFixture("openai-chat", "openai-gpt4o-text-usage.sse");
    llm.enqueue({ kind: "fixture", file });
    await invoke(chatRequest("run-nats:7")).ended;
    expect(admitted).toEqual([
      expect.objectContaining({ memberId: "member-1", clientKind: "cursor", routeId: "team-gpt", upstreamModel: "gpt-4o", call: { kind: "run-call", runId: "run-nats", callIndex: 7 } }),
    ]);
    expect(admitted[0]?.inputTokenEstimate).toBeGreaterThan(0);
    await waitFor(() => settled.length === 1, "the call to be settled");
    expect(settled[0]?.ticket.lease).toBe("lease-1");
    const usage = expectationFor("openai-chat", file).usage;
    expect(settled[0]?.usage).toMatchObject({ inputTokens: usage?.["inputTokens"], outputTokens: usage?.["outputTokens"] });
  });

  it("ends a call over a limit with one OVER_LIMIT failure and no upstream request", async () => {
    const accounting: CallAccounting = {
      admit: async () => ({ kind: "rejected", limit: "member_daily_tokens", message: "daily token budget used up", retryAfterMs: 90_000 }),
      settle: async () => {
        throw new Error("a rejected call is never settled");
      },
    };
    await startGateway({}, { accounting });
    const frames = await invoke(chatRequest("run-nats:8")).ended;
    expect(frames).toHaveLength(1);
    expect(frames[0]?.event).toMatchObject({
      case: "failure",
      value: { kind: ModelFailureKind.OVER_LIMIT, message: "daily token budget used up", providerCode: "member_daily_tokens", retryAfterMs: 90_000 },
    });
    expect(llm.requests).toHaveLength(0);
  });

  it("ends a call for a model the member may not use with CONFIG model_not_allowed", async () => {
    await startGateway({}, { accounting: { admit: async () => ({ kind: "forbidden", message: "not for you" }), settle: async () => undefined } });
    const frames = await invoke(chatRequest("run-nats:9")).ended;
    expect(frames[0]?.event).toMatchObject({ case: "failure", value: { kind: ModelFailureKind.CONFIG, providerCode: "model_not_allowed" } });
    expect(llm.requests).toHaveLength(0);
  });
});
