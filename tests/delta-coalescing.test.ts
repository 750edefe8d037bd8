/**
 * Deltas that arrive together travel together (issue 15, item 4): a 50-chunk
 * answer the upstream sends in one write crosses the bus as a handful of
 * ModelEvents and ClientEvents, and Cursor still sees exactly the same text.
 * With both windows set to 0 the same stream costs one ModelEvent and one
 * ClientEvent per chunk (the counts below are what the coalescing changes, not
 * an artefact); the ModelEvents of a burst still share a few bus messages (the
 * gateway packs the events of one event-loop turn into one message).
 *
 * Counted on the real bus: the ClientEvents on the run's events subject (a
 * subscription of the test), and every message the provider gateway published
 * (byok_nats_client_messages_total{direction="out"} of its ops listener).
 */
import { afterEach, describe, expect, it } from "vitest";
import { decodeClientEventFrame } from "@byok/contracts";
import { startGateway, type GatewayHarness, type GatewayHarnessOptions } from "@byok/test-support/gateway-harness";
import { parseMetricsText } from "@byok/test-support/prometheus-text";
import { chatDeltaStream } from "@byok/test-support/provider-streams";

const CHUNKS = 50;

async function publishedBy(url: string | undefined): Promise<number> {
  if (url === undefined) throw new Error("no ops listener");
  const text = parseMetricsText(await (await fetch(`${url}/metrics`)).text());
  const value = text.value("byok_nats_client_messages_total", { direction: "out", service: "provider-gateway" });
  if (value === undefined) throw new Error("byok_nats_client_messages_total{direction=out} missing");
  return value;
}

interface TurnCounts {
  textDeltaEvents: number;
  clientEvents: number;
  providerMessages: number;
  textDeltaFrames: number;
  /** Messages on the run's events subject (each one or more ClientEvents). */
  clientEventMessages: number;
}

async function burstTurn(gw: GatewayHarness): Promise<TurnCounts> {
  const stream = chatDeltaStream("chatcmpl-coalesce", CHUNKS, { burst: true });
  const events: Array<string | undefined> = [];
  let clientEventMessages = 0;
  const sub = gw.nc.subscribe(`${gw.bus.prefix}.runs.*.evt`, {
    callback: (_err, msg) => {
      clientEventMessages += 1;
      for (const event of decodeClientEventFrame(msg.data)) events.push(event.event.case);
    },
  });
  await gw.nc.flush();
  const before = await publishedBy(gw.ops.providerGateway);
  gw.llm.enqueue(stream.response);
  const result = await gw.client().conversation().send("say fifty words", { modelId: gw.modelId }).finished;
  sub.unsubscribe();
  expect(result.end, result.describe()).toEqual({ kind: "ok", metadata: {} });
  expect(result.violations).toEqual([]);
  expect(result.text).toBe(stream.text);
  const frames = result.timeline.filter((e) => e.kind === "frame" && e.message.message.case === "interactionUpdate" && e.message.message.value.message.case === "textDelta");
  return {
    textDeltaEvents: events.filter((c) => c === "textDelta").length,
    clientEvents: events.length,
    providerMessages: (await publishedBy(gw.ops.providerGateway)) - before,
    textDeltaFrames: frames.length,
    clientEventMessages,
  };
}

describe("delta coalescing on the Cursor path", () => {
  let gw: GatewayHarness | undefined;
  afterEach(async () => {
    await gw?.stop();
    gw = undefined;
  });

  const start = async (env: GatewayHarnessOptions["env"] = {}): Promise<GatewayHarness> => {
    gw = await startGateway({ opsListeners: true, env });
    return gw;
  };

  it("sends a 50-chunk burst as a few bus messages, and Cursor sees the same text", async () => {
    const counts = await burstTurn(await start());
    // The first delta alone, the rest joined (a slow scheduler may split the burst once or twice more).
    expect(counts.textDeltaEvents).toBeGreaterThanOrEqual(1);
    expect(counts.textDeltaEvents).toBeLessThanOrEqual(6);
    expect(counts.textDeltaFrames).toBeLessThanOrEqual(6);
    expect(counts.providerMessages).toBeLessThan(CHUNKS / 3);
  });

  it("without the windows every chunk is its own ModelEvent, ClientEvent and frame; the burst's ModelEvents share messages", async () => {
    const counts = await burstTurn(await start({ providerGateway: { PROVIDER_DELTA_COALESCE_MS: "0" }, runWorker: { CLIENT_DELTA_COALESCE_MS: "0" } }));
    // The worker forwards each ModelEvent delta as its own ClientEvent (its window is off too): 50 arrived.
    expect(counts.textDeltaEvents).toBe(CHUNKS);
    expect(counts.textDeltaFrames).toBe(CHUNKS);
    // Read in one go upstream, they left the gateway packed into a few messages, not one each,
    // and the worker forwards what one message brought in one message too.
    expect(counts.providerMessages).toBeLessThan(CHUNKS / 3);
    expect(counts.clientEventMessages).toBeLessThan(CHUNKS / 3);
  });
});
