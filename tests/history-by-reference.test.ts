/**
 * End to end: a model call sends over the bus only what follows the history
 * of the conversation's previous call (ModelRequest.history_base); the
 * provider gateway puts the whole history together, so the model still gets
 * every message, each request a prefix of the next. Across tool rounds and
 * across turns, the bus carries a constant number of messages per call while
 * the history grows.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { fromBinary } from "@bufbuild/protobuf";
import { ModelRequestSchema, type ModelRequest } from "@byok/contracts";
import type { tools } from "@byok/cursor-protocol";
import { startGateway, type GatewayHarness } from "@byok/test-support/gateway-harness";
import { chatMessages } from "@byok/test-support/chat-requests";
import { enqueueChat, execArgs, finishedOk, readSuccess } from "./tools-support.ts";

describe("history by reference on the bus", () => {
  let gw: GatewayHarness;
  beforeEach(async () => {
    gw = await startGateway();
  });
  afterEach(async () => {
    await gw.stop();
  });

  it("sends each call's new messages only; the upstream requests carry the whole history", async () => {
    const requests: ModelRequest[] = [];
    const sub = gw.nc.subscribe(gw.names.providerInvoke, { callback: (_err, msg) => void requests.push(fromBinary(ModelRequestSchema, msg.data)) });
    await gw.nc.flush();
    const files = ["/home/dev/project/one.ts", "/home/dev/project/two.ts"];
    files.forEach((path, i) => enqueueChat(gw, { id: `chatcmpl-ref-${i}`, calls: [{ id: `call_ref_${i}`, name: "Read", args: { path } }] }));
    enqueueChat(gw, { id: "chatcmpl-ref-final", text: "Two small files." });
    enqueueChat(gw, { id: "chatcmpl-ref-next", text: "You are welcome." });
    try {
      const chat = gw.client().conversation();
      await finishedOk(
        chat.send("Read both files.", {
          modelId: gw.modelId,
          onExec: { readArgs: (ctx) => ctx.reply(readSuccess(execArgs<tools.ReadArgs>(ctx).path, `// ${execArgs<tools.ReadArgs>(ctx).path}\n`)) },
        }),
      );
      await finishedOk(chat.send("Thanks.", { modelId: gw.modelId }));
    } finally {
      sub.unsubscribe();
    }

    expect(requests).toHaveLength(4);
    const [first, ...rest] = requests;
    expect(first!.historyBase).toBeUndefined();
    expect(first!.historyRevisionId).not.toBe("");
    let whole = first!.messages.length;
    let previous = first!;
    for (const request of rest) {
      // Each call names the previous call's history and carries what came after it:
      // within the turn the assistant's tool call and its result, in the next turn the final answer and the new user message.
      expect(request.historyBase).toMatchObject({ revisionId: previous.historyRevisionId, messageCount: whole });
      expect(request.messages.length).toBeGreaterThan(0);
      expect(request.messages.length).toBeLessThanOrEqual(2);
      whole += request.messages.length;
      previous = request;
    }

    // The model saw the whole history every time, each request a prefix of the next.
    const upstream = gw.llm.requestsTo("openai-chat").map((r) => chatMessages(r));
    expect(upstream).toHaveLength(4);
    for (let i = 0; i + 1 < upstream.length; i++) {
      const now = JSON.stringify(upstream[i]);
      expect(JSON.stringify(upstream[i + 1]).startsWith(now.slice(0, -1))).toBe(true);
    }
    expect(upstream[3]!.filter((m) => m.role === "tool")).toHaveLength(2);
  });
});
