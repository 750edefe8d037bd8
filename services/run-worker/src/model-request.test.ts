import { describe, expect, it } from "vitest";
import { create, fromBinary, toBinary, type MessageInitShape } from "@bufbuild/protobuf";
import {
  HistoryBaseSchema,
  MessageSchema,
  ModelRequestSchema,
  ModelSpecSchema,
  parseProviderCallIndex,
  parseRunId,
  PromptSpecSchema,
  RunClientKind,
  UserOrigin,
  type Message,
  type ModelRequest,
} from "@byok/contracts";
import { buildModelRequest, requestOnWire, type RunModelContext } from "./model-request.ts";

const message = (init: MessageInitShape<typeof MessageSchema>): Message => create(MessageSchema, init);

const run: RunModelContext = {
  runId: parseRunId("run-1"),
  conversationId: "conv-1",
  memberId: "alice",
  model: create(ModelSpecSchema, { modelId: "gpt-test", effort: "high", maxOutputTokens: 4096 }),
  prompt: create(PromptSpecSchema, { mode: "agent", systemText: "You are helpful.", tools: [{ name: "Read", description: "read a file", parametersJson: "{}" }] }),
  clientKind: RunClientKind.ACP,
};

const context = message({ body: { case: "user", value: { clientId: "request-context:abc", origin: UserOrigin.CONTEXT, content: [{ part: { case: "text", value: { text: "<env/>" } } }] } } });
const user = message({ body: { case: "user", value: { clientId: "m1", origin: UserOrigin.USER, content: [{ part: { case: "text", value: { text: "read a.txt" } } }] } } });
const callPair = [
  message({ body: { case: "assistant", value: { content: [{ part: { case: "toolCall", value: { callId: "c1", name: "Read", argumentsJson: '{"path":"a.txt"}' } } }] } } }),
  message({ body: { case: "toolResult", value: { callId: "c1", toolName: "Read", content: "hello" } } }),
];

/** Model call n of the run (counted from 1). */
const call = (n: number) => parseProviderCallIndex(n);

/** The model input of a request: everything except the call id that names the invocation and the client kind the ledger records. */
function modelInput(request: ModelRequest): Uint8Array {
  return toBinary(ModelRequestSchema, create(ModelRequestSchema, { ...request, callId: "", clientKind: RunClientKind.UNSPECIFIED }));
}

function isPrefix(prefix: Uint8Array, whole: Uint8Array): boolean {
  return prefix.length <= whole.length && prefix.every((b, i) => whole[i] === b);
}

describe("buildModelRequest", () => {
  it("names the call by run id and provider call index and carries the frozen spec and prompt", () => {
    const request = buildModelRequest(run, [context, user], call(3));
    expect(request.callId).toBe("run-1:3");
    expect(request.spec?.modelId).toBe("gpt-test");
    expect(request.prompt?.systemText).toBe("You are helpful.");
    expect(request.messages).toHaveLength(2);
    expect(request.clientKind).toBe(RunClientKind.ACP);
  });

  it("is deterministic: the same history gives the same bytes", () => {
    const a = buildModelRequest(run, [context, user], call(1));
    const b = buildModelRequest(run, [context, user], call(1));
    expect(toBinary(ModelRequestSchema, a)).toEqual(toBinary(ModelRequestSchema, b));
  });

  it("keeps prefix stability: call n's model input is a byte prefix of call n+1's", () => {
    const history: Message[] = [context, user];
    const first = buildModelRequest(run, history, call(1));
    history.push(...callPair);
    const second = buildModelRequest(run, history, call(2));
    expect(first.messages).toHaveLength(2);
    expect(isPrefix(modelInput(first), modelInput(second))).toBe(true);
    expect(modelInput(second).length).toBeGreaterThan(modelInput(first).length);
  });

  it("does not put the call id into model input", () => {
    const a = buildModelRequest(run, [user], call(1));
    const b = buildModelRequest(run, [user], call(7));
    expect(modelInput(a)).toEqual(modelInput(b));
  });

  it("copies the history so later appends do not change a sent request", () => {
    const history: Message[] = [user];
    const request = buildModelRequest(run, history, call(1));
    history.push(...callPair);
    expect(request.messages).toHaveLength(1);
  });
});

describe("requestOnWire", () => {
  it("keeps every field of the request and carries only the messages after the base", () => {
    const request = buildModelRequest(run, [context, user, ...callPair], call(2));
    const wire = requestOnWire(request, create(HistoryBaseSchema, { revisionId: "rev-2", messageCount: 2 }), "rev-4");
    expect(wire.messages).toEqual(callPair);
    expect(wire.historyBase).toMatchObject({ revisionId: "rev-2", messageCount: 2 });
    expect(wire.historyRevisionId).toBe("rev-4");
    const { messages: _m, historyBase: _b, historyRevisionId: _r, ...rest } = wire;
    const { messages: _m2, historyBase: _b2, historyRevisionId: _r2, ...original } = request;
    expect(rest).toEqual(original);
    // The request itself is not changed.
    expect(request.messages).toHaveLength(4);
    expect(request.historyBase).toBeUndefined();
  });

  it("sends the whole history without a base, still naming its revision", () => {
    const request = buildModelRequest(run, [user], call(1));
    const wire = requestOnWire(request, undefined, "rev-1");
    expect(wire.messages).toEqual([user]);
    expect(wire.historyBase).toBeUndefined();
    expect(fromBinary(ModelRequestSchema, toBinary(ModelRequestSchema, wire)).historyRevisionId).toBe("rev-1");
  });
});
