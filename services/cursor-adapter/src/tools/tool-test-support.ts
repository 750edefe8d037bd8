/**
 * Helpers for the tools unit tests: a plan context with a controllable clock,
 * and a way to pass client messages through their wire encoding.
 */
import { fromBinary, toBinary, type DescMessage, type MessageShape } from "@bufbuild/protobuf";
import { loadToolCatalog } from "./catalog.ts";
import { McpRouteTable, type McpDefinitionLike } from "./mcp-routes.ts";
import { NO_WEB_TOOLS } from "./web-tools.ts";
import type { ExecCall, ExecProgress, ToolOutcome, ToolPlan, ToolPlanContext } from "./types.ts";
import type { tools } from "@byok/cursor-protocol";

export interface TestClock {
  now: number;
}

export function testContext(
  overrides: Partial<Omit<ToolPlanContext, "now">> & { clock?: TestClock; mcpDefinitions?: McpDefinitionLike[] } = {},
): ToolPlanContext {
  const clock = overrides.clock ?? { now: 1_700_000_000_000 };
  const { clock: _clock, mcpDefinitions, ...rest } = overrides;
  return {
    conversationId: "conv-1",
    terminalsFolder: "/home/u/.cursor/projects/p/terminals",
    // The agent mode's tools (prompt/cursor/modes/agent.json) and the client's MCP tools.
    allowedToolNames: new Set([...(loadToolCatalog().modes.get("agent") ?? []), ...(mcpDefinitions ?? []).map((d) => d.name)]),
    mcp: new McpRouteTable(mcpDefinitions ?? []),
    todos: [],
    mode: "agent",
    subagents: { modelId: "byok-child", rootConversationId: "conv-1", customTypes: new Map([["reviewer", "Reviews a change"]]) },
    stepUpdates: 0,
    web: NO_WEB_TOOLS,
    startedAtMs: clock.now,
    now: () => clock.now,
    ...rest,
  };
}

/** Encodes and decodes a message, as if it had crossed the wire. */
export function viaWire<Desc extends DescMessage>(schema: Desc, message: MessageShape<Desc>): MessageShape<Desc> {
  return fromBinary(schema, toBinary(schema, message));
}

export function execOf(plan: ToolPlan): ExecCall {
  if (plan.kind !== "exec") throw new Error(`expected an exec plan, got ${plan.kind}`);
  return plan.exec;
}

export function doneOf(progress: ExecProgress): ToolOutcome {
  if (progress.kind !== "done") throw new Error(`expected done, got ${progress.kind}`);
  return progress.outcome;
}

export function invalidOf(plan: ToolPlan): Extract<ToolPlan, { kind: "invalid" }> {
  if (plan.kind !== "invalid") throw new Error(`expected an invalid plan, got ${plan.kind}`);
  return plan;
}

type Variant = tools.ToolCall["tool"];
type VariantValue<C> = Variant extends infer V ? (V extends { case: C; value: infer X } ? X : never) : never;

/** The card's typed variant of case `c`, or a thrown error. */
export function variantOf<C extends NonNullable<Variant["case"]>>(toolCall: tools.ToolCall, c: C): VariantValue<C> {
  if (toolCall.tool.case !== c) throw new Error(`expected card ${c}, got ${String(toolCall.tool.case)}`);
  return toolCall.tool.value as unknown as VariantValue<C>;
}
