/**
 * End to end: exec answers that do not fit the protocol. An answer for an exec
 * id the server never sent (or without an id), a second answer for the same
 * exec, or an answer meant for another run are never handed to the run owner
 * as tool results: the run ends with a typed protocol error (running execs
 * aborted first), nothing of it is committed, and other runs go on.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FailureKind, RunStatus, type Message } from "@byok/contracts";
import type { tools } from "@byok/cursor-protocol";
import { waitFor } from "@byok/test-support/infra";
import type { CursorRun, ExecContext, RunResult } from "@byok/test-support/fake-cursor";
import { startGateway, type GatewayHarness } from "@byok/test-support/gateway-harness";
import { providerFixture } from "@byok/test-support/fixtures";
import { enqueueChat, execArgs, finishedOk, readSuccess } from "./tools-support.ts";

const TEXT_FIXTURE = providerFixture("openai-chat", "openai-gpt4o-text-usage.sse");

function expectProtocolError(result: RunResult, fragment: string): void {
  const frames = result.describe();
  expect(result.end, frames).toMatchObject({ kind: "error", code: "invalid_argument" });
  expect(result.end.kind === "error" && result.end.message, frames).toContain("protocol error");
  expect(result.end.kind === "error" && result.end.message, frames).toContain(fragment);
  expect(result.turnEnded, frames).toBeUndefined();
  expect(result.violations, frames).toEqual([]);
}

/** Tool results the store holds for the conversation (none when nothing was committed). */
async function storedResults(gw: GatewayHarness, conversationId: string): Promise<Message[]> {
  const conversation = await gw.store("getConversation", { conversationId });
  if (conversation.headRevisionId === "") return [];
  const history = await gw.store("getRevisionMessages", { revisionId: conversation.headRevisionId });
  return history.messages.filter((m) => m.body.case === "toolResult");
}

async function runEnds(gw: GatewayHarness, runId: string, status: RunStatus, failureKind = FailureKind.UNSPECIFIED): Promise<void> {
  const run = await waitFor(
    async () => {
      const record = (await gw.store("getRun", { runId })).run;
      return record?.status === status ? record : undefined;
    },
    `run ${runId} to be ${RunStatus[status]}`,
    10_000,
  );
  expect(run.failureKind).toBe(failureKind);
}

function execIdsOf(result: RunResult, label: "exec" | "exec_abort"): number[] {
  return result.timeline.flatMap((e) => (e.kind === "frame" && e.label.startsWith(`${label}#`) ? [Number(e.label.slice(label.length + 1))] : []));
}

describe("exec protocol errors end to end", () => {
  let gw: GatewayHarness;
  beforeEach(async () => {
    gw = await startGateway();
  });
  afterEach(async () => {
    await gw.stop();
  });

  for (const [name, id, fragment] of [
    ["an unknown exec id", 999, "unknown exec id 999"],
    ["no exec id", 0, "exec message without an id"],
  ] as const) {
    it(`a result with ${name}: aborts the running exec, typed protocol error, nothing committed`, async () => {
      enqueueChat(gw, { id: "chatcmpl-proto-1", calls: [{ id: "call_read_x", name: "Read", args: { path: "/home/dev/project/x.ts" } }] });
      const chat = gw.client().conversation();
      const run: CursorRun = chat.send("Read x.ts", {
        modelId: gw.modelId,
        onExec: {
          readArgs: async (ctx: ExecContext) => {
            // Answer with the wrong id and keep the real exec waiting.
            await run.send({ message: { case: "execClientMessage", value: { ...readSuccess("/home/dev/project/x.ts", "x"), id } } }, "bad_exec_result");
            await new Promise<void>((resolve) => ctx.signal.addEventListener("abort", () => resolve(), { once: true }));
          },
        },
      });
      const result = await run.finished;
      expectProtocolError(result, fragment);
      // The exec still running was aborted before the error end.
      const [execId] = execIdsOf(result, "exec");
      expect(execIdsOf(result, "exec_abort")).toEqual([execId]);
      const abortAt = result.timeline.find((e) => e.kind === "frame" && e.label === `exec_abort#${execId}`)!.order;
      expect(abortAt).toBeLessThan(result.timeline.find((e) => e.kind === "end")!.order);
      await runEnds(gw, result.requestId, RunStatus.FAILED, FailureKind.PROTOCOL);
      expect(await storedResults(gw, chat.id)).toEqual([]);
      expect(gw.llm.requestsTo("openai-chat")).toHaveLength(1);
    });
  }

  it("a second result for an answered exec: typed protocol error, the other exec aborted, at most the first result committed", async () => {
    enqueueChat(gw, {
      id: "chatcmpl-proto-2",
      calls: [
        { id: "call_dup_a", name: "Read", args: { path: "/home/dev/project/a.ts" } },
        { id: "call_dup_b", name: "Read", args: { path: "/home/dev/project/b.ts" } },
      ],
    });
    const chat = gw.client().conversation();
    const result = await chat.send("Read a and b", {
      modelId: gw.modelId,
      onExec: {
        readArgs: async (ctx: ExecContext) => {
          const { path } = execArgs<tools.ReadArgs>(ctx);
          if (path.endsWith("b.ts")) {
            await new Promise<void>((resolve) => ctx.signal.addEventListener("abort", () => resolve(), { once: true }));
            return;
          }
          await ctx.reply(readSuccess(path, "a"));
          await ctx.result(readSuccess(path, "a, again"));
        },
      },
    }).finished;
    expectProtocolError(result, "answered again");
    const execs = execIdsOf(result, "exec");
    expect(execs).toHaveLength(2);
    expect(execIdsOf(result, "exec_abort")).toHaveLength(1);
    await runEnds(gw, result.requestId, RunStatus.FAILED, FailureKind.PROTOCOL);
    const committed = await storedResults(gw, chat.id);
    expect(committed.map((m) => (m.body.case === "toolResult" ? m.body.value.callId : ""))).not.toContain("call_dup_b");
    expect(committed.filter((m) => m.body.case === "toolResult" && m.body.value.content === "a, again")).toEqual([]);
    expect(gw.llm.requestsTo("openai-chat")).toHaveLength(1);
  });

  it("a result sent on another run's request: that run fails with a protocol error, the exec's own run completes", async () => {
    // Run Y: a plain answer held upstream, so Y is still running when the stray result arrives.
    const heldForY = gw.llm.enqueue({ kind: "fixture", file: TEXT_FIXTURE, holdHeaders: true });
    const client = gw.client();
    const runY = client.conversation().send("Tell me something.", { modelId: gw.modelId });
    await heldForY.held;

    enqueueChat(gw, { id: "chatcmpl-proto-x1", calls: [{ id: "call_x_read", name: "Read", args: { path: "/home/dev/project/x.ts" } }] });
    enqueueChat(gw, { id: "chatcmpl-proto-x2", text: "x.ts exports x." });
    const chatX = client.conversation();
    const runX = chatX.send("Read x.ts", {
      modelId: gw.modelId,
      onExec: {
        readArgs: async (ctx: ExecContext) => {
          const answer = readSuccess("/home/dev/project/x.ts", "export const x = 1;\n");
          // The same answer on the wrong request id first ...
          await runY.send({ message: { case: "execClientMessage", value: { ...answer, id: ctx.exec.id } } }, "stray_exec_result");
          await runY.finished;
          // ... then where it belongs.
          await ctx.reply(answer);
        },
      },
    });

    const y = await runY.finished;
    expectProtocolError(y, `unknown exec id`);
    const x = await finishedOk(runX);
    expect(x.violations, x.describe()).toEqual([]);
    expect(x.text).toBe("x.ts exports x.");
    const xResults = await storedResults(gw, chatX.id);
    expect(xResults.map((m) => (m.body.case === "toolResult" ? m.body.value.content : ""))).toEqual(["export const x = 1;\n"]);
    await runEnds(gw, y.requestId, RunStatus.FAILED, FailureKind.PROTOCOL);
    await runEnds(gw, x.requestId, RunStatus.COMPLETED);
  });
});
