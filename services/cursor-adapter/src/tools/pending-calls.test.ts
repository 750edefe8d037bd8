import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { AssistantMessageSchema, type AssistantMessage } from "@byok/contracts";
import { describe, expect, it } from "vitest";
import { buildPendingToolCallsJson, parsePendingToolCallsJson, toolIdentifierOf } from "./pending-calls.ts";

interface PendingJson {
  role: string;
  id: string;
  content: Array<{ type: string }>;
  providerOptions: {
    cursor: { pendingToolCallStartedAtMs: number; pendingToolExecutionContracts: Record<string, Record<string, unknown>> };
    byok?: { replay?: unknown };
  };
}

function assistant(init: MessageInitShape<typeof AssistantMessageSchema>): AssistantMessage {
  return create(AssistantMessageSchema, init);
}

const ROUND = assistant({
  content: [
    { part: { case: "reasoning", value: { text: "look first" } } },
    { part: { case: "text", value: { text: "Reading." } } },
    { part: { case: "toolCall", value: { callId: "call_a\nfc_1", name: "Read", argumentsJson: '{"path":"/w/a.ts"}' } } },
    { part: { case: "toolCall", value: { callId: "call_b", name: "CallMcpTool", argumentsJson: '{ "server": "s", "toolName": "t" }' } } },
    { part: { case: "toolCall", value: { callId: "call_c", name: "srv-ping", argumentsJson: "{}" } } },
  ],
  replay: { providerKind: "anthropic", routeId: "claude", data: new Uint8Array([1, 2, 3]) },
});

const INPUT = {
  assistant: ROUND,
  startedAtMs: 1_760_000_000_123,
  allowedToolNames: ["Read", "CallMcpTool", "srv-ping"],
  dynamicToolNames: new Set(["srv-ping"]),
};

describe("toolIdentifierOf", () => {
  it("uses SCREAMING_SNAKE with the known exceptions", () => {
    expect(toolIdentifierOf("Read", false)).toBe("READ");
    expect(toolIdentifierOf("StrReplace", false)).toBe("STR_REPLACE");
    expect(toolIdentifierOf("ReadLints", false)).toBe("READ_LINTS");
    expect(toolIdentifierOf("GetMcpTools", false)).toBe("GET_MCP_TOOLS");
    expect(toolIdentifierOf("CallMcpTool", false)).toBe("MCP");
    expect(toolIdentifierOf("CreatePlan", false)).toBe("CREATE_PLAN_V2");
    expect(toolIdentifierOf("srv-ping", true)).toBe("MCP");
  });
});

describe("pending tool calls JSON", () => {
  it("adds the cursor metadata to the assistant root JSON", () => {
    const json = JSON.parse(buildPendingToolCallsJson(INPUT)) as PendingJson;
    expect(json.role).toBe("assistant");
    expect(json.id).toBe("1");
    expect(json.content.map((p) => p.type)).toEqual(["reasoning", "text", "tool-call", "tool-call", "tool-call"]);
    const cursor = json.providerOptions.cursor;
    expect(cursor.pendingToolCallStartedAtMs).toBe(1_760_000_000_123);
    expect(cursor.pendingToolExecutionContracts).toEqual({
      "call_a\nfc_1": { toolCallId: "call_a\nfc_1", outerToolName: "Read", toolIdentifier: "READ", isDynamic: false, allowedToolNames: INPUT.allowedToolNames },
      call_b: { toolCallId: "call_b", outerToolName: "CallMcpTool", toolIdentifier: "MCP", isDynamic: false, allowedToolNames: INPUT.allowedToolNames },
      call_c: { toolCallId: "call_c", outerToolName: "srv-ping", toolIdentifier: "MCP", isDynamic: true, allowedToolNames: INPUT.allowedToolNames },
    });
    expect(json.providerOptions.byok?.replay).toBeDefined();
  });

  it("round-trips: same assistant, same call ids (byte for byte), same start time", () => {
    const parsed = parsePendingToolCallsJson(buildPendingToolCallsJson(INPUT));
    if (parsed.kind !== "ok") throw new Error(parsed.message);
    expect(parsed.startedAtMs).toBe(INPUT.startedAtMs);
    expect(parsed.calls.map((c) => [c.callId, c.name, c.argumentsJson])).toEqual([
      ["call_a\nfc_1", "Read", '{"path":"/w/a.ts"}'],
      ["call_b", "CallMcpTool", '{ "server": "s", "toolName": "t" }'],
      ["call_c", "srv-ping", "{}"],
    ]);
    expect(parsed.assistant).toEqual(ROUND);
  });

  it("flags arguments that are not a JSON object in the contract", () => {
    const broken = assistant({ content: [{ part: { case: "toolCall", value: { callId: "x", name: "Read", argumentsJson: "[1]" } } }] });
    const json = JSON.parse(buildPendingToolCallsJson({ ...INPUT, assistant: broken })) as PendingJson;
    expect(json.providerOptions.cursor.pendingToolExecutionContracts["x"]?.["argumentError"]).toBe("arguments are not a JSON object");
  });

  it("writes a staged final answer without tool metadata and reads it back without a start time", () => {
    const final = assistant({ content: [{ part: { case: "text", value: { text: "Done." } } }] });
    const json = buildPendingToolCallsJson({ ...INPUT, assistant: final });
    expect(json).toBe('{"role":"assistant","id":"1","content":[{"type":"text","text":"Done."}]}');
    const parsed = parsePendingToolCallsJson(json);
    expect(parsed).toMatchObject({ kind: "ok", calls: [], startedAtMs: undefined });
  });

  it("reads the shape another server wrote (args objects, no byok options)", () => {
    const foreign = JSON.stringify({
      role: "assistant",
      id: "1",
      content: [{ type: "tool-call", toolCallId: "call_z", toolName: "Grep", args: { pattern: "x" } }],
      providerOptions: {
        cursor: {
          pendingToolCallStartedAtMs: 1_760_000_000_000,
          pendingToolExecutionContracts: { call_z: { toolCallId: "call_z", outerToolName: "Grep", toolIdentifier: "GREP" } },
        },
      },
    });
    const parsed = parsePendingToolCallsJson(foreign);
    expect(parsed).toMatchObject({ kind: "ok", startedAtMs: 1_760_000_000_000 });
    if (parsed.kind === "ok") expect(parsed.calls[0]).toMatchObject({ callId: "call_z", name: "Grep", argumentsJson: '{"pattern":"x"}' });
  });

  it("refuses JSON that is not a usable pending assistant", () => {
    expect(parsePendingToolCallsJson("{").kind).toBe("invalid");
    expect(parsePendingToolCallsJson('{"role":"user","content":"hi"}').kind).toBe("invalid");
    const badTime = '{"role":"assistant","content":[],"providerOptions":{"cursor":{"pendingToolCallStartedAtMs":"soon"}}}';
    expect(parsePendingToolCallsJson(badTime).kind).toBe("invalid");
    const strayContract =
      '{"role":"assistant","content":[],"providerOptions":{"cursor":{"pendingToolCallStartedAtMs":1,"pendingToolExecutionContracts":{"ghost":{}}}}}';
    expect(parsePendingToolCallsJson(strayContract)).toEqual({ kind: "invalid", message: 'pending contract for unknown tool call "ghost"' });
    const duplicate = JSON.stringify({
      role: "assistant",
      content: [
        { type: "tool-call", toolCallId: "d", toolName: "Read", args: {} },
        { type: "tool-call", toolCallId: "d", toolName: "Read", args: {} },
      ],
    });
    expect(parsePendingToolCallsJson(duplicate).kind).toBe("invalid");
  });
});
