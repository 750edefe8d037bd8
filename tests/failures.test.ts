/**
 * End to end, what a member sees when things go wrong: provider errors before
 * and during the stream, cancel from the IDE, and malformed client input. Real
 * HTTP, NATS and Postgres; only the LLM is a mock.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { fromBinary, toBinary } from "@bufbuild/protobuf";
import { FailureKind, RunStatus, type Message } from "@byok/contracts";
import { agent, aiserver } from "@byok/cursor-protocol";
import { waitFor } from "@byok/test-support/infra";
import { readChatFixture } from "@byok/test-support/chat-fixture";
import { storedHistory } from "@byok/test-support/stored-messages";
import { buildRunRequest, emptyConversationState, isTextDelta, type FakeConversation, type RunResult } from "@byok/test-support/fake-cursor";
import { startGateway, type GatewayHarness } from "@byok/test-support/gateway-harness";
import { providerFixture } from "@byok/test-support/fixtures";

const TEXT_FIXTURE = providerFixture("openai-chat", "openai-gpt4o-text-usage.sse");
const expected = readChatFixture(TEXT_FIXTURE);

function assistantMessages(messages: readonly Message[]): Message[] {
  return messages.filter((m) => m.body.case === "assistant");
}

/** The run failed/cancelled as a user sees it: an error EndStream, no turn_ended, no checkpoint after the failure. */
function expectErrorEnd(result: RunResult, code?: string): void {
  const frames = result.describe();
  expect(result.end, frames).toMatchObject(code === undefined ? { kind: "error" } : { kind: "error", code });
  expect(result.turnEnded, frames).toBeUndefined();
  expect(result.violations, frames).toEqual([]);
  expect(result.checkpoints.filter((c) => c.kind === "staged"), frames).toEqual([]);
}

/** Nothing of the model's answer reached the store: no assistant message in the conversation's head. */
async function expectNothingAppended(gw: GatewayHarness, conversationId: string): Promise<void> {
  expect(assistantMessages(await storedHistory(gw, conversationId))).toEqual([]);
}

/** Waits until the store records the run with `status` (the worker finishes it asynchronously). */
async function runStatus(gw: GatewayHarness, runId: string, status: RunStatus, failureKind?: FailureKind): Promise<void> {
  let last = "no run record";
  try {
    await waitFor(
      async () => {
        const run = (await gw.store("getRun", { runId })).run;
        if (run !== undefined) last = `${RunStatus[run.status]} ${FailureKind[run.failureKind]} ${JSON.stringify(run.failureMessage)}`;
        return run?.status === status && (failureKind === undefined || run.failureKind === failureKind);
      },
      `run ${runId} to be ${RunStatus[status]}${failureKind === undefined ? "" : ` (${FailureKind[failureKind]})`}`,
      10_000,
    );
  } catch (err) {
    throw new Error(`${(err as Error).message}; the store has it ${last}`, { cause: err });
  }
}

describe("failures end to end", () => {
  let gw: GatewayHarness;
  let chat: FakeConversation;
  beforeEach(async () => {
    gw = await startGateway();
    chat = gw.client().conversation();
  });
  afterEach(async () => {
    await gw.stop();
  });

  it("provider HTTP 500: error EndStream with provider details, no turn_ended, nothing appended, run failed", async () => {
    gw.llm.enqueue({ kind: "error", endpoint: "openai-chat", status: 500, body: { error: { message: "upstream exploded", type: "server_error" } } });
    const result = await chat.send("hello?", { modelId: gw.modelId }).finished;

    expectErrorEnd(result, "unavailable");
    expect(result.text).toBe("");
    if (result.end.kind !== "error") return;
    const detail = result.end.details.find((d) => d.type === "aiserver.v1.ErrorDetails");
    expect(detail, "EndStream carries aiserver.v1.ErrorDetails").toBeDefined();
    expect(fromBinary(aiserver.ErrorDetailsSchema, detail!.value).error).toBe(aiserver.ErrorDetails_Error.PROVIDER_ERROR);

    await runStatus(gw, result.requestId, RunStatus.FAILED, FailureKind.PROVIDER);
    await expectNothingAppended(gw, chat.id);
  });

  // Streams that break the endpoint's rules (issue: strict model cycle). Each must fail the run with an
  // error EndStream and leave the conversation as it was: no tool runs, nothing appended.
  const chatChunk = (delta: object, finishReason: string | null = null) => ({
    id: "chatcmpl-bad",
    object: "chat.completion.chunk",
    created: 1,
    model: "gpt-test",
    choices: [{ index: 0, delta, finish_reason: finishReason }],
  });
  const toolStart = (index: number, id: string, args: string) =>
    chatChunk({ tool_calls: [{ index, id, type: "function", function: { name: "Read", arguments: args } }] });
  const malformed: Array<[string, unknown[]]> = [
    ["tool arguments that are not complete JSON at finish_reason", [chatChunk({ role: "assistant", content: "Let me look." }), toolStart(0, "call_1", '{"path":'), chatChunk({}, "tool_calls")]],
    ["two tool calls with the same id", [toolStart(0, "call_1", "{}"), toolStart(1, "call_1", "{}"), chatChunk({}, "tool_calls")]],
    ["text after finish_reason", [chatChunk({ content: "Done." }), chatChunk({}, "stop"), chatChunk({ content: " And more." })]],
    ["a length cut", [chatChunk({ content: "This answer is cut" }), chatChunk({}, "length")]],
  ];
  for (const [what, chunks] of malformed) {
    it(`a provider stream with ${what}: error EndStream, no tool executed, nothing appended`, async () => {
      gw.llm.enqueue({ kind: "chunks", endpoint: "openai-chat", chunks });
      let execs = 0;
      const result = await chat.send("look at a.ts", { modelId: gw.modelId, onExec: () => void (execs += 1) }).finished;
      expectErrorEnd(result);
      expect(execs, result.describe()).toBe(0);
      await runStatus(gw, result.requestId, RunStatus.FAILED);
      await expectNothingAppended(gw, chat.id);
    });
  }

  it("provider stream cut mid-way: the partial text stays on screen, but the run fails and appends nothing", async () => {
    // Hold after 6 events until the client has shown text, then cut the connection (a cut right after the
    // writes could drop the bytes before anyone reads them).
    const upstream = gw.llm.enqueue({ kind: "fixture", file: TEXT_FIXTURE, holdAfterEvents: 6, disconnectAfterEvents: 6 });
    const run = chat.send("hello?", { modelId: gw.modelId });
    await upstream.held;
    await run.waitForFrame(isTextDelta, "the first text delta");
    upstream.release();
    const result = await run.finished;

    expectErrorEnd(result, "unavailable");
    expect(result.text.length, result.describe()).toBeGreaterThan(0);
    expect(expected.text.startsWith(result.text)).toBe(true);
    expect(result.text.length).toBeLessThan(expected.text.length);
    await runStatus(gw, result.requestId, RunStatus.FAILED, FailureKind.PROVIDER);
    await expectNothingAppended(gw, chat.id);
  });

  it("cancel mid-stream: EndStream canceled within 2 s, the upstream call aborted, the run cancelled, nothing appended", async () => {
    const upstream = gw.llm.enqueue({ kind: "fixture", file: TEXT_FIXTURE, holdAfterEvents: 4 });
    const run = chat.send("tell me a long story", { modelId: gw.modelId });
    await run.waitForFrame(isTextDelta, "the first text delta");
    await upstream.held;

    const cancelledAt = performance.now();
    await run.cancel("user pressed stop");
    const result = await run.finished;
    const endEntry = result.timeline.find((e) => e.kind === "end");
    expect(endEntry, result.describe()).toBeDefined();
    expect(endEntry!.at - cancelledAt).toBeLessThan(2_000);

    expectErrorEnd(result, "canceled");
    await runStatus(gw, result.requestId, RunStatus.CANCELLED);
    const request = await upstream.request;
    await waitFor(() => request.aborted, "the upstream LLM request to be aborted", 5_000);
    await expectNothingAppended(gw, chat.id);
  });

  describe("bad input is a Connect error and the service keeps serving", () => {
    const cases: Array<{ name: string; data: () => string }> = [
      { name: "non-hex data", data: () => "this is not hex!" },
      { name: "undecodable protobuf", data: () => "ffffffffffffffffff" },
      {
        name: "a run request without a model",
        data: () =>
          Buffer.from(
            toBinary(
              agent.AgentClientMessageSchema,
              buildRunRequest({
                conversationId: crypto.randomUUID(),
                conversationState: emptyConversationState(),
                model: { via: "none" },
                action: { kind: "user_message", text: "hi" },
              }),
            ),
          ).toString("hex"),
      },
    ];

    for (const c of cases) {
      it(c.name, async () => {
        const client = gw.client();
        const response = await client.bidiAppendRaw({ requestId: crypto.randomUUID(), seqno: 0, data: c.data() });
        expect(response.status).toBe(400);
        expect(JSON.parse(response.body.toString("utf8"))).toMatchObject({ code: "invalid_argument" });

        gw.llm.enqueue({ kind: "fixture", file: TEXT_FIXTURE });
        const after = await chat.send("still there?", { modelId: gw.modelId }).finished;
        expect(after.end, after.describe()).toEqual({ kind: "ok", metadata: {} });
        expect(after.text).toBe(expected.text);
      });
    }
  });
});

describe("a blob SET the client never ACKs", () => {
  let gw: GatewayHarness;
  beforeEach(async () => {
    gw = await startGateway({ env: { cursorAdapter: { BLOB_ACK_TIMEOUT_MS: "500" } } });
  });
  afterEach(async () => {
    await gw.stop();
  });

  it("fails the run with an error EndStream and never publishes a checkpoint that references it", async () => {
    gw.llm.enqueue({ kind: "fixture", file: TEXT_FIXTURE });
    const isAssistantRoot = (data: Uint8Array): boolean => {
      try {
        return (JSON.parse(Buffer.from(data).toString("utf8")) as { role?: unknown }).role === "assistant";
      } catch {
        return false;
      }
    };
    const dropped: string[] = [];
    const result = await gw
      .client()
      .conversation()
      .send("hello?", {
        modelId: gw.modelId,
        kv: {
          dropAck: (set) => {
            if (!isAssistantRoot(set.data)) return false;
            dropped.push(Buffer.from(set.blobId).toString("hex"));
            return true;
          },
        },
      }).finished;

    expect(dropped, result.describe()).toHaveLength(1);
    expectErrorEnd(result);
    for (const checkpoint of result.checkpoints)
      expect(checkpoint.state.rootPromptMessagesJson.map((r) => Buffer.from(r).toString("hex"))).not.toContain(dropped[0]);
    // run.proto StateAck: the client could not project the state -> the run fails as a client failure.
    await runStatus(gw, result.requestId, RunStatus.FAILED, FailureKind.CLIENT);
  });
});
