/**
 * End to end (real Postgres, NATS, HTTP): a conversation whose parts outgrow
 * one NATS message (the server's max_payload, 1 MiB by default). A file read
 * of 1.5 MB is one run command, one state event, one tool result in the store,
 * one blob and part of every later ModelRequest; it reaches the adapter that
 * does not hold the run, which forwards it to the owner. The next turn, on a worker
 * that never held the conversation, reads the whole history back from the
 * store in one reply. All of it goes through the payload bucket, and the model
 * sees the file byte for byte. Before the bucket, the run ended at the first
 * of those messages.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Objm } from "@nats-io/obj";
import type { tools } from "@byok/cursor-protocol";
import { startGateway, type GatewayHarness } from "@byok/test-support/gateway-harness";
import type { LogCapture } from "@byok/test-support/service-logger";
import { chatMessages, textOf } from "@byok/test-support/chat-requests";
import { enqueueChat, execArgs, finishedOk, readNotFound, readSuccess, writeSuccess } from "./tools-support.ts";

/** 1.5 MB of source text: over the 1 MiB NATS limit on its own. */
const LARGE_FILE = "export const line = 'a line of code long enough to matter in a large file';\n".repeat(20_000);

/** What the services logged about a message the bus refused (lost UI events, a model frame, a request). */
function refusedPublishes(logs: LogCapture): string[] {
  return logs.lines.filter((line) => /max_payload|could not publish|cannot publish/.test(line));
}

describe("a conversation larger than one NATS message", () => {
  let gw: GatewayHarness;
  let logs: LogCapture;
  beforeEach(async () => {
    logs = { level: "warn", lines: [] };
    // A model with a large window, so the worker sends the whole history instead of compacting it.
    gw = await startGateway({ model: { contextWindow: 1_000_000 }, adapters: 2, logs });
  });
  afterEach(async () => {
    await gw.stop();
  });

  it("reads a 1.5 MB file (its result sent to the other adapter), answers, and goes on in the next turn on another worker", async () => {
    enqueueChat(gw, { id: "chatcmpl-large-1", calls: [{ id: "call_large_read", name: "Read", args: { path: "/home/dev/project/big.ts" } }] });
    enqueueChat(gw, { id: "chatcmpl-large-2", text: "It is one long list of lines." });
    enqueueChat(gw, { id: "chatcmpl-large-3", text: "Still the same file." });

    // The RunSSE goes to one adapter, every append (the tool result among them) to the other.
    const [owner, other] = gw.adapterUrls;
    const chat = gw.client({ transport: { baseUrl: owner! }, appendTransports: [{ baseUrl: other! }] }).conversation();
    const first = await finishedOk(
      chat.send("What is in big.ts?", {
        modelId: gw.modelId,
        onExec: { readArgs: (ctx) => ctx.reply(readSuccess(execArgs<tools.ReadArgs>(ctx).path, LARGE_FILE)) },
      }),
    );
    expect(first.violations, first.describe()).toEqual([]);
    expect(first.text).toContain("It is one long list of lines.");

    // The next turn's history is read from the store by a worker that never held it.
    await gw.workers[0]!.stop();
    await gw.startWorker();
    const second = await finishedOk(chat.send("And now?", { modelId: gw.modelId }));
    expect(second.violations, second.describe()).toEqual([]);
    expect(second.text).toContain("Still the same file.");
    expect(refusedPublishes(logs)).toEqual([]);

    const requests = gw.llm.requestsTo("openai-chat");
    expect(requests).toHaveLength(3);
    for (const request of requests.slice(1)) {
      const toolMessages = chatMessages(request).filter((m) => m.role === "tool");
      expect(toolMessages).toHaveLength(1);
      expect(String(toolMessages[0]!.content)).toContain(LARGE_FILE);
    }

    // Payloads of requests and replies are removed once read; only the run command's stays (a stream's
    // message may be read again) until it expires with the stream's own age limit.
    const bucket = await new Objm(gw.nc).open(gw.names.payloadsBucket);
    await expect.poll(async () => (await bucket.list()).length, { timeout: 10_000 }).toBe(1);
  });

  it("writes a 700 KB file: the call's last arguments, its end and the whole response are more than one bus message", async () => {
    const contents = "line of generated code that the model writes out in full\n".repeat(12_000);
    enqueueChat(gw, { id: "chatcmpl-write-1", calls: [{ id: "call_large_write", name: "Write", args: { path: "/home/dev/project/generated.ts", contents } }] });
    enqueueChat(gw, { id: "chatcmpl-write-2", text: "Written." });
    const writes: string[] = [];
    const result = await finishedOk(
      gw.client().conversation().send("Generate the file.", {
        modelId: gw.modelId,
        onExec: {
          // The gateway reads the file first (a new file: not found).
          readArgs: (ctx) => ctx.reply(readNotFound(execArgs<tools.ReadArgs>(ctx).path)),
          writeArgs: async (ctx) => {
            const args = execArgs<tools.WriteArgs>(ctx);
            writes.push(args.fileText);
            await ctx.reply(writeSuccess(args.path, args.fileText));
          },
        },
      }),
    );
    expect(result.violations, result.describe()).toEqual([]);
    expect(result.text).toContain("Written.");
    expect(writes).toEqual([contents]);
    // The pass that ended the call (its end with the whole arguments, then the whole response) went to the
    // adapter as two messages instead of one the bus refused: no UI event was lost on the way.
    expect(refusedPublishes(logs)).toEqual([]);
  });

  it("takes a 1.5 MB prompt (a pasted log): the run itself is larger than one NATS message", async () => {
    enqueueChat(gw, { id: "chatcmpl-paste", text: "The log repeats one line." });
    const pasted = `Why does this fail?\n${LARGE_FILE}`;
    const result = await finishedOk(gw.client().conversation().send(pasted, { modelId: gw.modelId }));
    expect(result.violations, result.describe()).toEqual([]);
    expect(result.text).toContain("The log repeats one line.");
    const users = chatMessages(gw.llm.requestsTo("openai-chat")[0]).filter((m) => m.role === "user");
    expect(users.map((m) => textOf(m.content)).join("\n")).toContain(LARGE_FILE);
    expect(refusedPublishes(logs)).toEqual([]);
  });
});
