import { create, toBinary } from "@bufbuild/protobuf";
import { tools } from "@byok/cursor-protocol";
import { describe, expect, it } from "vitest";
import {
  emptyVariant,
  partialCard,
  partialToolCallUpdate,
  toolCallCard,
  toolCallCompletedUpdate,
  toolCallDeltaUpdate,
  toolCallStartedUpdate,
} from "./cards.ts";
import { viaWire } from "./tool-test-support.ts";

describe("tool cards", () => {
  it("gives each tool an empty typed variant for partial_tool_call", () => {
    const expected: Record<string, string | undefined> = {
      Shell: "shellToolCall",
      AwaitShell: "awaitToolCall",
      Read: "readToolCall",
      Write: "editToolCall",
      StrReplace: "editToolCall",
      Delete: "deleteToolCall",
      Grep: "grepToolCall",
      Glob: "globToolCall",
      ReadLints: "readLintsToolCall",
      TodoWrite: "updateTodosToolCall",
      CallMcpTool: "mcpToolCall",
      GetMcpTools: "getMcpToolsToolCall",
      FetchMcpResource: "readMcpResourceToolCall",
      AskQuestion: "askQuestionToolCall",
    };
    for (const [name, variant] of Object.entries(expected)) expect(emptyVariant(name, false).case).toBe(variant);
    expect(emptyVariant("srv-ping", true).case).toBe("mcpToolCall");
    expect(emptyVariant("Unknown", false).case).toBeUndefined();

    const card = partialCard("call_1", "Read", false);
    expect(card.toolCallId).toBe("call_1");
    expect(card.startedAtMs).toBeUndefined();
    const variant = card.tool.case === "readToolCall" ? card.tool.value : undefined;
    expect(variant).toBeDefined();
    expect(variant?.args).toBeUndefined();
    expect(variant?.result).toBeUndefined();
  });

  it("puts tool_call_id, started_at_ms and completed_at_ms on fields 57, 59 and 60", () => {
    const card = toolCallCard("c", { case: "readToolCall", value: create(tools.ReadToolCallSchema) }, { startedAtMs: 1, completedAtMs: 2 });
    const hex = Buffer.from(toBinary(tools.ToolCallSchema, card)).toString("hex");
    // tags (fields in number order): read_tool_call 8<<3|2 = 0x42, 57<<3|2 = 0x1ca -> ca03,
    // 59<<3|0 = 0x1d8 -> d803, 60<<3|0 = 0x1e0 -> e003
    expect(hex).toBe("4200" + "ca030163" + "d80301" + "e00302");
    expect(viaWire(tools.ToolCallSchema, card)).toEqual(card);
  });

  it("wraps cards in the InteractionUpdate payloads", () => {
    const card = partialCard("c", "Shell", false);
    expect(partialToolCallUpdate("c", card, "m1")).toMatchObject({ case: "partialToolCall", value: { callId: "c", toolCall: card, modelCallId: "m1" } });
    expect(toolCallStartedUpdate("c", card, "m1").case).toBe("toolCallStarted");
    expect(toolCallCompletedUpdate("c", card, "m1").case).toBe("toolCallCompleted");
    const delta = create(tools.ToolCallDeltaSchema, { delta: { case: "shellToolCallDelta", value: { delta: { case: "stdout", value: { content: "x" } } } } });
    expect(toolCallDeltaUpdate("c", delta, "m1")).toMatchObject({ case: "toolCallDelta", value: { callId: "c", toolCallDelta: delta } });
  });
});
