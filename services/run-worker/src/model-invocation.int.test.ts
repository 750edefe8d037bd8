/**
 * The transport rules of a model call over real NATS. The peer here is a
 * scripted responder on the invoke subject, because the conditions under test
 * (sequence gaps, silence, garbage frames) are exactly what a correct provider
 * gateway never produces. The idle timeout runs on a manual clock: silence is
 * simulated by advancing it, never by waiting. End-to-end runs against the
 * real gateway live in tests/run-worker-*.test.ts.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { create, fromBinary, type MessageInitShape } from "@bufbuild/protobuf";
import { connect, headers, type Msg, type NatsConnection } from "@nats-io/transport-node";
import { busNames, CALLER_PROBE_HEADER, encodeModelEventFrame, MessageSchema, ModelEventSchema, ModelFailureKind, ModelRequestSchema, parseProviderCallId, StopReason, type BusNames, type ModelRequest } from "@byok/contracts";
import { silentLogger } from "@byok/platform";
import { createTestBus, NATS_URL, waitFor } from "@byok/test-support/infra";
import { ManualClock } from "@byok/test-support/manual-clock";
import type { ForwardedEvent } from "./model-cycle.ts";
import { busModelInvoker } from "./model-invocation.ts";

type EventInit = NonNullable<MessageInitShape<typeof ModelEventSchema>["event"]>;

const TEXT_ANSWER: EventInit[] = [
  { case: "start", value: { providerKind: "openai-chat" } },
  { case: "textStart", value: { index: 0 } },
  { case: "textDelta", value: { index: 0, text: "hi" } },
  { case: "textEnd", value: { index: 0 } },
  { case: "usage", value: { inputTokens: 3n, outputTokens: 1n } },
  { case: "done", value: { reason: StopReason.STOP } },
];

function frame(seq: number, event: EventInit): Uint8Array {
  return encodeModelEventFrame([{ seq: BigInt(seq), event }]);
}

describe("model invocation over the bus", () => {
  let names: BusNames;
  let nc: NatsConnection;
  let peer: NatsConnection;

  beforeEach(async () => {
    // Subjects of their own per test: the server drops a closed connection's subscriptions
    // asynchronously, so the previous test's peer may still hold interest in a shared subject.
    names = busNames(createTestBus().prefix);
    nc = await connect({ servers: NATS_URL });
    peer = await connect({ servers: NATS_URL });
  });
  afterEach(async () => {
    await nc.close();
    await peer.close();
  });

  /** Answers each invoke with `script(request, msg)`; resolves once the subscription is live. */
  async function gatewayPeer(script: (request: ModelRequest, msg: Msg) => void): Promise<void> {
    peer.subscribe(names.providerInvoke, { queue: "provider-gateway", callback: (_err, msg) => script(fromBinary(ModelRequestSchema, msg.data), msg) });
    await peer.flush();
  }

  /** One call whose idle timeout runs on a manual clock (it never fires unless the test advances the clock). */
  function invoke(idleTimeoutMs: number, signal = new AbortController().signal) {
    const clock = new ManualClock();
    const invoker = busModelInvoker({ nc, names, idleTimeoutMs, log: silentLogger(), clock });
    const forwarded: ForwardedEvent[] = [];
    const request = create(ModelRequestSchema, { callId: "run-a:1", runId: "run-a" });
    const outcome = invoker.invoke(request, (e) => forwarded.push(e), signal);
    const state = { ended: false };
    void outcome.then(() => (state.ended = true));
    return { forwarded, outcome, clock, state };
  }

  it("completes a well-formed stream and forwards its UI events in order", async () => {
    await gatewayPeer((request, msg) => {
      expect(request.callId).toBe("run-a:1");
      TEXT_ANSWER.forEach((event, i) => msg.respond(frame(i + 1, event)));
    });
    const { forwarded, outcome } = invoke(2_000);
    const result = await outcome;
    expect(result.kind).toBe("completed");
    expect(forwarded.map((e) => e.case)).toEqual(["textStart", "textDelta", "textEnd", "usage"]);
  });

  it("takes several events from one message, checking seq per event", async () => {
    await gatewayPeer((_request, msg) => {
      msg.respond(encodeModelEventFrame(TEXT_ANSWER.slice(0, 3).map((event, i) => ({ seq: BigInt(i + 1), event }))));
      msg.respond(encodeModelEventFrame(TEXT_ANSWER.slice(3).map((event, i) => ({ seq: BigInt(i + 4), event }))));
    });
    const result = await invoke(2_000).outcome;
    expect(result.kind).toBe("completed");

    names = busNames(createTestBus().prefix);
    await gatewayPeer((_request, msg) => {
      // seq 3 missing inside the message
      msg.respond(encodeModelEventFrame([TEXT_ANSWER[0]!, TEXT_ANSWER[1]!, TEXT_ANSWER[3]!].map((event, i) => ({ seq: BigInt(i === 2 ? 4 : i + 1), event }))));
    });
    const gap = await invoke(2_000).outcome;
    expect(gap.kind === "failed" && gap.failure.message).toMatch(/sequence gap: expected 3, got 4/);
  });

  it("fails as unavailable at once when no gateway listens", async () => {
    // The clock never moves: only the no-responders answer can end this call.
    const result = await invoke(5_000).outcome;
    expect(result.kind === "failed" && result.failure).toMatchObject({ origin: "provider", kind: ModelFailureKind.UNAVAILABLE, retryable: true });
  });

  it("fails as unavailable when the gateway goes silent", async () => {
    await gatewayPeer((_request, msg) => {
      msg.respond(frame(1, { case: "start", value: {} }));
      msg.respond(frame(2, { case: "textStart", value: { index: 0 } }));
      msg.respond(frame(3, { case: "textDelta", value: { index: 0, text: "partial" } }));
    });
    const { forwarded, outcome, clock, state } = invoke(300);
    await waitFor(() => forwarded.length === 2, "the frames to arrive");
    await clock.advance(299);
    expect(state.ended).toBe(false);
    await clock.advance(1);
    const result = await outcome;
    expect(result.kind === "failed" && result.failure).toMatchObject({ kind: ModelFailureKind.UNAVAILABLE, partialText: "partial" });
    expect(result.kind === "failed" && result.failure.message).toMatch(/silent for 300 ms/);
  });

  it("needs the first frame within the idle timeout", async () => {
    await gatewayPeer(() => undefined);
    const { outcome, clock } = invoke(200);
    await clock.whenTimers(1);
    await clock.advance(200);
    const result = await outcome;
    expect(result.kind === "failed" && result.failure.kind).toBe(ModelFailureKind.UNAVAILABLE);
  });

  it("stays alive on keepalives while the endpoint is slow", async () => {
    let call: Msg | undefined;
    await gatewayPeer((_request, msg) => (call = msg));
    const { outcome, clock, state } = invoke(250);
    const reply = await waitFor(() => call, "the model request");
    let seq = 0;
    // Four keepalives 200 ms apart: 800 ms in all, far over the idle timeout, but never 250 ms of silence.
    for (let i = 0; i < 4; i++) {
      await clock.advance(200);
      expect(state.ended).toBe(false);
      reply.respond(frame(++seq, { case: "keepalive", value: {} }));
      await waitFor(() => clock.msUntilNextTimer() === 250, "the keepalive to push the idle deadline back");
    }
    for (const event of TEXT_ANSWER) reply.respond(frame(++seq, event));
    expect((await outcome).kind).toBe("completed");
  });

  it("treats a sequence gap as a transport failure", async () => {
    await gatewayPeer((_request, msg) => {
      msg.respond(frame(1, TEXT_ANSWER[0] as EventInit));
      msg.respond(frame(3, TEXT_ANSWER[1] as EventInit));
    });
    const result = await invoke(2_000).outcome;
    expect(result.kind === "failed" && result.failure.message).toMatch(/sequence gap: expected 2, got 3/);
  });

  it("fails as a protocol failure on an undecodable frame", async () => {
    await gatewayPeer((_request, msg) => msg.respond(new Uint8Array([0xff, 0xff, 0xff])));
    const result = await invoke(2_000).outcome;
    expect(result.kind === "failed" && result.failure).toMatchObject({ origin: "protocol", kind: ModelFailureKind.PROTOCOL });
  });

  it("answers the gateway's caller probes while the call is open, without counting them as frames; nobody answers once it ended", async () => {
    const probe = () => {
      const h = headers();
      h.set(CALLER_PROBE_HEADER, "1");
      return { timeout: 1_000, headers: h };
    };
    let inbox = "";
    const answered: boolean[] = [];
    await gatewayPeer((_request, msg) => {
      inbox = msg.reply ?? "";
      void (async () => {
        msg.respond(frame(1, TEXT_ANSWER[0] as EventInit));
        // Probes between frames: a probe is not a frame and takes no seq.
        for (let i = 0; i < 2; i++) answered.push((await peer.request(inbox, new Uint8Array(0), probe())) !== undefined);
        TEXT_ANSWER.slice(1).forEach((event, i) => msg.respond(frame(i + 2, event)));
      })();
    });
    const { forwarded, outcome } = invoke(2_000);
    const result = await outcome;
    expect(result.kind).toBe("completed");
    expect(answered).toEqual([true, true]);
    expect(forwarded.map((e) => e.case)).toEqual(["textStart", "textDelta", "textEnd", "usage"]);
    // The call is over: its inbox is gone, which is how the gateway learns that a caller left.
    // The invoker's unsubscribe is buffered by the client: once flushed, the server has it (a
    // probe in between finds the interest still there and times out; the gateway then probes again).
    await nc.flush();
    await expect(peer.request(inbox, new Uint8Array(0), probe())).rejects.toThrow(/no responders/i);
  });

  it("cancels: publishes to the call's cancel subject and resolves cancelled", async () => {
    const cancelSeen = new Promise<string>((resolve) => {
      peer.subscribe(names.providerCancel(parseProviderCallId("run-a:1")), { callback: (_err, msg) => resolve(msg.subject) });
    });
    let started: () => void = () => undefined;
    const streaming = new Promise<void>((resolve) => (started = resolve));
    await gatewayPeer((_request, msg) => {
      msg.respond(frame(1, { case: "start", value: {} }));
      started();
    });
    const abort = new AbortController();
    const { outcome } = invoke(5_000, abort.signal);
    await streaming;
    abort.abort();
    expect((await outcome).kind).toBe("cancelled");
    expect(await cancelSeen).toBe(names.providerCancel(parseProviderCallId("run-a:1")));
  });

  it("sends only what follows the history it sent before, and the whole history again when the gateway does not hold that base", async () => {
    const seen: ModelRequest[] = [];
    /** The gateway's answer per request, in order: "base_unknown" or a text answer. */
    const answers: Array<"base_unknown" | "text"> = ["text", "base_unknown", "text", "text"];
    await gatewayPeer((request, msg) => {
      seen.push(request);
      if (answers[seen.length - 1] === "base_unknown")
        msg.respond(frame(1, { case: "failure", value: { kind: ModelFailureKind.HISTORY_BASE_UNKNOWN, message: "not held", retryable: true } }));
      else TEXT_ANSWER.forEach((event, i) => msg.respond(frame(i + 1, event)));
    });
    const invoker = busModelInvoker({ nc, names, idleTimeoutMs: 5_000, log: silentLogger(), clock: new ManualClock() });
    const text = (t: string) => create(MessageSchema, { body: { case: "user", value: { content: [{ part: { case: "text", value: { text: t } } }] } } });
    const messages = ["one", "two", "three", "four", "five", "six"].map(text);
    const call = async (index: number, count: number, revisionId: string) => {
      const forwarded: ForwardedEvent[] = [];
      const request = create(ModelRequestSchema, { callId: `run-a:${index}`, runId: "run-a", conversationId: "conv-a", messages: messages.slice(0, count) });
      const history = { revisionId, messageIds: messages.slice(0, count).map((_, i) => `m${i}`) };
      const outcome = await invoker.invoke(request, (e) => forwarded.push(e), new AbortController().signal, history);
      expect(outcome.kind).toBe("completed");
      // Only the answer that completed reached the run (the refused attempt forwards nothing).
      expect(forwarded.map((e) => e.case)).toEqual(["textStart", "textDelta", "textEnd", "usage"]);
    };

    await call(1, 2, "rev-2");
    await call(2, 4, "rev-4"); // refused once, then whole
    await call(3, 6, "rev-6");
    expect(seen.map((r) => [r.historyBase?.revisionId ?? "", r.historyBase?.messageCount ?? 0, r.messages.length, r.historyRevisionId])).toEqual([
      ["", 0, 2, "rev-2"],
      ["rev-2", 2, 2, "rev-4"],
      ["", 0, 4, "rev-4"],
      ["rev-4", 4, 2, "rev-6"],
    ]);
    expect(seen[3]!.messages.map((m) => (m.body.value as { content: Array<{ part: { value: { text: string } } }> }).content[0]!.part.value.text)).toEqual(["five", "six"]);
  });
});
