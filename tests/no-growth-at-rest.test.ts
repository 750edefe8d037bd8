/**
 * No growth at rest (issue 15, item 3): every run reads its commands through
 * a JetStream consumer of its own, and that consumer is gone once the run
 * has ended. Ten runs (some at once, some one after another) leave the
 * command stream's consumer count where it was before them.
 */
import { afterEach, describe, expect, it } from "vitest";
import { jetstreamManager } from "@nats-io/jetstream";
import { startGateway, type GatewayHarness } from "@byok/test-support/gateway-harness";
import { waitFor } from "@byok/test-support/infra";
import { chatDeltaStream } from "@byok/test-support/provider-streams";

async function commandConsumers(gw: GatewayHarness): Promise<number> {
  const jsm = await jetstreamManager(gw.nc);
  let count = 0;
  for await (const _ of jsm.consumers.list(gw.names.commandsStream)) count++;
  return count;
}

describe("no growth at rest", () => {
  let gw: GatewayHarness | undefined;
  afterEach(async () => {
    await gw?.stop();
    gw = undefined;
  });

  it("removes each run's command consumer when the run ends", async () => {
    gw = await startGateway();
    const harness = gw;
    const baseline = await commandConsumers(harness);
    const client = harness.client();
    const turn = async (): Promise<void> => {
      const stream = chatDeltaStream("chatcmpl-rest", 5);
      harness.llm.enqueue(stream.response);
      const result = await client.conversation().send("hello", { modelId: harness.modelId }).finished;
      expect(result.end, result.describe()).toEqual({ kind: "ok", metadata: {} });
      expect(result.text).toBe(stream.text);
    };

    // While a run is open its consumer exists (the count is not trivially the baseline).
    const held = harness.llm.enqueue({ ...chatDeltaStream("chatcmpl-held", 3).response, holdAfterEvents: 1 });
    const open = client.conversation().send("wait", { modelId: harness.modelId });
    await held.held;
    expect(await commandConsumers(harness)).toBe(baseline + 1);
    held.release();
    expect((await open.finished).end).toEqual({ kind: "ok", metadata: {} });

    await Promise.all([turn(), turn(), turn(), turn(), turn()]);
    for (let i = 0; i < 4; i++) await turn();
    await waitFor(async () => (await commandConsumers(harness)) === baseline, "the command consumers of the ended runs to be deleted", 10_000);
    expect(await commandConsumers(harness)).toBe(baseline);
  });
});
