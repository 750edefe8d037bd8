/**
 * No growth at rest (issue 15, item 3): every run reads its commands through
 * a subscription of its own (and a read of the command stream, no consumer),
 * and the subscription is gone once the run has ended. Ten runs (some at
 * once, some one after another) leave the run worker's subscription count and
 * the command stream's consumer count where they were before them.
 */
import { afterEach, describe, expect, it } from "vitest";
import { jetstreamManager } from "@nats-io/jetstream";
import { startGateway, type GatewayHarness } from "@byok/test-support/gateway-harness";
import { waitFor } from "@byok/test-support/infra";
import { parseMetricsText } from "@byok/test-support/prometheus-text";
import { chatDeltaStream } from "@byok/test-support/provider-streams";

async function commandConsumers(gw: GatewayHarness): Promise<number> {
  const jsm = await jetstreamManager(gw.nc);
  let count = 0;
  for await (const _ of jsm.consumers.list(gw.names.commandsStream)) count++;
  return count;
}

/** Subscriptions open on the run worker's NATS connection (its /metrics). */
async function workerSubscriptions(gw: GatewayHarness): Promise<number> {
  const opsUrl = gw.workers[0]?.opsUrl;
  if (opsUrl === undefined) throw new Error("the harness's run worker serves no metrics");
  const metrics = parseMetricsText(await (await fetch(`${opsUrl}/metrics`)).text());
  return metrics.value("byok_nats_client_subscriptions", { service: "run-worker" }) ?? Number.NaN;
}

describe("no growth at rest", () => {
  let gw: GatewayHarness | undefined;
  afterEach(async () => {
    await gw?.stop();
    gw = undefined;
  });

  it("removes each run's command subscription when the run ends and makes no consumer", async () => {
    gw = await startGateway({ opsListeners: true });
    const harness = gw;
    const baseline = await commandConsumers(harness);
    const subscriptionsAtRest = await workerSubscriptions(harness);
    expect(subscriptionsAtRest).toBeGreaterThan(0);
    const client = harness.client();
    const turn = async (): Promise<void> => {
      const stream = chatDeltaStream("chatcmpl-rest", 5);
      harness.llm.enqueue(stream.response);
      const result = await client.conversation().send("hello", { modelId: harness.modelId }).finished;
      expect(result.end, result.describe()).toEqual({ kind: "ok", metadata: {} });
      expect(result.text).toBe(stream.text);
    };

    // While a run is open its subscriptions exist (the count is not trivially the baseline).
    const held = harness.llm.enqueue({ ...chatDeltaStream("chatcmpl-held", 3).response, holdAfterEvents: 1 });
    const open = client.conversation().send("wait", { modelId: harness.modelId });
    await held.held;
    expect(await workerSubscriptions(harness)).toBeGreaterThan(subscriptionsAtRest);
    held.release();
    expect((await open.finished).end).toEqual({ kind: "ok", metadata: {} });

    await Promise.all([turn(), turn(), turn(), turn(), turn()]);
    for (let i = 0; i < 4; i++) await turn();
    await waitFor(async () => (await workerSubscriptions(harness)) === subscriptionsAtRest, "the subscriptions of the ended runs to be gone", 10_000);
    expect(await commandConsumers(harness)).toBe(baseline);
  });
});
