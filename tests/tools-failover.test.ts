/**
 * End to end: the run worker owning a tool round stops half-way (one result
 * committed, one call still running in the IDE). The next worker continues the
 * round from the store; the Cursor side sees nothing of it: no tool runs twice,
 * still one staged and one settled checkpoint for the round, and the answer.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { waitFor } from "@byok/test-support/infra";
import { startGateway, type GatewayHarness } from "@byok/test-support/gateway-harness";
import { afterLastUser, chatMessages } from "@byok/test-support/chat-requests";
import { enqueueChat, finishedOk, holdReads } from "./tools-support.ts";

describe("tool round across a worker handover", () => {
  let gw: GatewayHarness;
  beforeEach(async () => {
    gw = await startGateway();
  });
  afterEach(async () => {
    await gw.stop();
  });

  it("runs each tool once and projects the round once when another worker finishes it", async () => {
    enqueueChat(gw, {
      id: "chatcmpl-failover-1",
      calls: [
        { id: "call_fo_a", name: "Read", args: { path: "/home/dev/project/a.ts" } },
        { id: "call_fo_b", name: "Read", args: { path: "/home/dev/project/b.ts" } },
      ],
    });
    enqueueChat(gw, { id: "chatcmpl-failover-2", text: "Read both after the handover." });

    // B's answer waits until the round is in the next worker's hands.
    const reads = holdReads((path) => `// ${path}\n`, (toolCallId) => toolCallId === "call_fo_b");
    const chat = gw.client().conversation();
    const run = chat.send("Read a and b.", { modelId: gw.modelId, onExec: reads.onExec });

    // A's result is committed under the first worker, then that worker goes away.
    await waitFor(async () => (await gw.store("getOpenToolRound", { runId: run.requestId })).round?.results.length === 1, "A's result committed", 10_000);
    await gw.workers[0]!.stop();
    const second = await gw.startWorker();
    await waitFor(() => second.runsTaken() > 0, "the second worker to take the run", 10_000);
    reads.release();

    const result = await finishedOk(run);
    expect(result.violations, result.describe()).toEqual([]);
    expect(result.text).toBe("Read both after the handover.");
    expect([...reads.executed].sort()).toEqual(["call_fo_a", "call_fo_b"]);
    expect(result.checkpoints.filter((c) => c.beforeTurnEnded).map((c) => c.kind)).toEqual(["staged", "settled"]);
    const settled = result.checkpoints.find((c) => c.kind === "settled")!;
    const roots = settled.state.rootPromptMessagesJson.map((id) => chat.client.blobs.json(id) as { role: string; id?: string });
    expect(roots.filter((r) => r.role === "tool").map((r) => r.id)).toEqual(["call_fo_a", "call_fo_b"]);
    const loop = afterLastUser(chatMessages(gw.llm.requestsTo("openai-chat")[1]));
    expect(loop.map((m) => m.tool_call_id ?? m.tool_calls?.[0]?.id)).toEqual(["call_fo_a", "call_fo_a", "call_fo_b", "call_fo_b"]);
  });
});
