import { describe, expect, it } from "vitest";
import { create } from "@bufbuild/protobuf";
import { agent, tools } from "@byok/cursor-protocol";
import { silentLogger } from "@byok/platform";
import type { ExecCall, ExecProgress, ExecReply, ExecStep } from "../tools/types.ts";
import { ExecWire, type WireProgress } from "./exec-wire.ts";

const readStep = (path: string, delayMs = 0): ExecStep => ({ request: { case: "readArgs", value: create(tools.ReadArgsSchema, { path }) }, delayMs });

/** An exec that reads `paths` one after the other and finishes with their contents. */
function readsInTurn(paths: string[]): ExecCall {
  const seen: string[] = [];
  return {
    first: readStep(paths[0]!),
    onReply(reply: ExecReply): ExecProgress {
      if (reply.case === undefined) return { kind: "waiting" };
      if (reply.case !== "readResult") return { kind: "protocol_error", message: `read answered with ${reply.case}` };
      seen.push(reply.value.result.case === "success" && reply.value.result.value.output.case === "content" ? reply.value.result.value.output.value : "?");
      const next = paths[seen.length];
      if (next !== undefined) return { kind: "next", step: readStep(next) };
      return { kind: "done", outcome: { content: seen.join("+"), isError: false, toolCall: create(tools.ToolCallSchema), effects: [] } };
    },
    onThrow: (error) => ({ kind: "done", outcome: { content: `threw ${error}`, isError: true, toolCall: create(tools.ToolCallSchema), effects: [] } }),
    onClosedWithoutResult: () => ({ kind: "done", outcome: { content: "closed", isError: true, toolCall: create(tools.ToolCallSchema), effects: [] } }),
  };
}

function harness() {
  const sent: agent.AgentServerMessage[] = [];
  const errors: string[] = [];
  const progress: WireProgress[] = [];
  const wire = new ExecWire({ send: (m) => sent.push(m), protocolError: (m) => errors.push(m), workFailed: (e) => errors.push(String(e)), log: silentLogger() });
  const execIds = () => sent.flatMap((m) => (m.message.case === "execServerMessage" ? [m.message.value.id] : []));
  const aborts = () => sent.flatMap((m) => (m.message.case === "execServerControlMessage" && m.message.value.message.case === "abort" ? [m.message.value.message.value.id] : []));
  const result = (id: number, content: string) =>
    wire.onExecMessage(
      create(agent.ExecClientMessageSchema, { id, message: { case: "readResult", value: { result: { case: "success", value: { path: "p", output: { case: "content", value: content } } } } } }),
    );
  const close = (id: number) => wire.onExecControl(create(agent.ExecClientControlMessageSchema, { message: { case: "streamClose", value: { id } } }));
  return { wire, sent, errors, progress, execIds, aborts, result, close, onProgress: (p: WireProgress) => progress.push(p) };
}

describe("exec wire", () => {
  it("numbers execs from 1 across calls, follows multi-step execs under new ids, and finishes the call", () => {
    const h = harness();
    h.wire.startExec("call_a", readsInTurn(["/a", "/b"]), h.onProgress);
    h.wire.startExec("call_c", readsInTurn(["/c"]), h.onProgress);
    expect(h.execIds()).toEqual([1, 2]);
    expect(h.sent[0]?.message.case === "execServerMessage" && h.sent[0].message.value.execId).toBe("call_a");
    h.result(1, "A");
    h.close(1);
    expect(h.execIds()).toEqual([1, 2, 3]);
    h.result(3, "B");
    h.close(3);
    h.result(2, "C");
    expect(h.progress.map((p) => (p.kind === "done" ? p.outcome.content : p.kind))).toEqual(["A+B", "C"]);
    expect(h.errors).toEqual([]);
  });

  it("reports unknown, missing and repeated ids as protocol errors without touching the call", () => {
    const h = harness();
    h.wire.startExec("call_a", readsInTurn(["/a"]), h.onProgress);
    h.result(7, "x");
    h.result(0, "x");
    h.result(1, "A");
    h.result(1, "A again");
    h.close(1);
    h.close(1);
    expect(h.errors).toEqual(["unknown exec id 7", "exec message without an id", "exec 1 answered again after its terminal result", "exec 1 closed twice"]);
    expect(h.progress).toHaveLength(1);
  });

  it("turns a close before any result into the call's failure, and a wrong result kind into a protocol error", () => {
    const h = harness();
    h.wire.startExec("call_a", readsInTurn(["/a"]), h.onProgress);
    h.wire.startExec("call_b", readsInTurn(["/b"]), h.onProgress);
    h.close(1);
    expect(h.progress.map((p) => p.kind === "done" && p.outcome.content)).toEqual(["closed"]);
    h.wire.onExecMessage(create(agent.ExecClientMessageSchema, { id: 2, message: { case: "deleteResult", value: {} } }));
    expect(h.errors).toEqual(["read answered with deleteResult"]);
  });

  it("aborts only execs still waiting for their result and ignores their late answers", () => {
    const h = harness();
    h.wire.startExec("call_done", readsInTurn(["/a"]), h.onProgress);
    h.wire.startExec("call_running", readsInTurn(["/b"]), h.onProgress);
    h.result(1, "A");
    expect(h.wire.abortRunning()).toEqual([2]);
    expect(h.aborts()).toEqual([2]);
    h.result(2, "late");
    h.close(2);
    expect(h.errors).toEqual([]);
    expect(h.progress).toHaveLength(1);
    // Nothing new goes out after the stop.
    h.wire.startExec("call_after", readsInTurn(["/c"]), h.onProgress);
    expect(h.execIds()).toEqual([1, 2]);
  });

  it("routes interaction responses by their own id sequence", () => {
    const h = harness();
    const answers: string[] = [];
    const query = { case: "askQuestionInteractionQuery" as const, value: create(tools.AskQuestionInteractionQuerySchema, { toolCallId: "call_q" }) };
    h.wire.startExec("call_a", readsInTurn(["/a"]), h.onProgress);
    h.wire.startQuery(
      "call_q",
      query,
      (reply) => {
        answers.push(reply.case ?? "none");
        return { kind: "done", outcome: { content: "answered", isError: false, toolCall: create(tools.ToolCallSchema), effects: [] } };
      },
      h.onProgress,
    );
    const queryIds = h.sent.flatMap((m) => (m.message.case === "interactionQuery" ? [m.message.value.id] : []));
    expect(queryIds).toEqual([1]);
    const respond = (id: number) =>
      h.wire.onInteractionResponse(create(agent.InteractionResponseSchema, { id, result: { case: "askQuestionInteractionResponse", value: {} } }));
    respond(1);
    respond(1);
    respond(4);
    expect(answers).toEqual(["askQuestionInteractionResponse"]);
    expect(h.errors).toEqual(["interaction query 1 answered again after its terminal result", "unknown interaction query id 4"]);
  });

  it("runs gateway-side work after an approval; stopping the wire aborts it and drops its outcome", async () => {
    const h = harness();
    const outcome = { content: "page", isError: false, toolCall: create(tools.ToolCallSchema), effects: [] };
    let workSignal: AbortSignal | undefined;
    let finish!: () => void;
    const finished = new Promise<void>((resolve) => (finish = resolve));
    const approve = () =>
      ({
        kind: "work",
        run: async (signal: AbortSignal) => {
          workSignal = signal;
          await finished;
          return outcome;
        },
      }) as const;
    h.wire.startQuery("call_fetch", { case: "webFetchRequestQuery", value: create(tools.WebFetchRequestQuerySchema) }, approve, h.onProgress);
    h.wire.onInteractionResponse(create(agent.InteractionResponseSchema, { id: 1, result: { case: "webFetchRequestResponse", value: { result: { case: "approved", value: {} } } } }));
    await new Promise((resolve) => setImmediate(resolve));
    expect(workSignal?.aborted).toBe(false);
    h.wire.abortRunning();
    expect(workSignal?.aborted).toBe(true);
    finish();
    await new Promise((resolve) => setImmediate(resolve));
    expect(h.progress).toEqual([]);

    // Without a stop, the work's outcome completes the call; a thrown error is reported as a failure.
    const g = harness();
    g.wire.runWork(() => Promise.resolve(outcome), g.onProgress);
    g.wire.runWork(() => Promise.reject(new Error("bug")), g.onProgress);
    await new Promise((resolve) => setImmediate(resolve));
    expect(g.progress).toEqual([{ kind: "done", outcome }]);
    expect(g.errors).toEqual(["Error: bug"]);
  });
});
