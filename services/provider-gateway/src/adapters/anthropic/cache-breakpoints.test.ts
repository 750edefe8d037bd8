/**
 * Anthropic prompt caching: the breakpoints of a conversation's successive
 * requests (turn 1, its tool round, turn 2) sit on the same stable positions,
 * never more than the API's four, and the bodies stay byte prefixes of each
 * other in the default (automatic) placement.
 */
import { create } from "@bufbuild/protobuf";
import { AssistantMessageSchema } from "@byok/contracts";
import { describe, expect, it } from "vitest";
import { assistant, historyPrefixOf, modelRequest, NO_UPSTREAM, prepareBody, testRoute, toolResult, userText, type MessageInit } from "../../testing/call-kit.ts";

const tools = [{ name: "Read", description: "Read a file", parametersJson: '{"type":"object","properties":{"path":{"type":"string"}}}' }];
const call = (id: string): MessageInit =>
  assistant(create(AssistantMessageSchema, { content: [{ part: { case: "toolCall", value: { callId: id, name: "Read", argumentsJson: '{"path":"a.ts"}' } } }] }));
const text = (t: string): MessageInit => assistant(create(AssistantMessageSchema, { content: [{ part: { case: "text", value: { text: t } } }] }));

/** The histories of three successive model calls: turn 1, after its tool round, turn 2. */
const histories: MessageInit[][] = [
  [userText("turn one")],
  [userText("turn one"), call("c1"), toolResult("c1", "Read", "contents")],
  [userText("turn one"), call("c1"), toolResult("c1", "Read", "contents"), text("done"), userText("turn two")],
];

function bodies(overrides: Parameters<typeof testRoute>[2]) {
  const route = testRoute("anthropic", NO_UPSTREAM, { upstreamModel: "claude-sonnet-4-5", promptCaching: true, ...overrides });
  return histories.map((messages) => {
    const prepared = prepareBody(route, modelRequest({ route, messages, system: "You are a coding agent.", tools }));
    if (prepared.kind !== "ready") throw new Error(prepared.message);
    return prepared.body;
  });
}

/** Paths of every cache_control in a body. */
function breakpoints(body: Record<string, unknown>): string[] {
  const found: string[] = [];
  const walk = (value: unknown, path: string): void => {
    if (Array.isArray(value)) value.forEach((v, i) => walk(v, `${path}[${i}]`));
    else if (typeof value === "object" && value !== null) {
      for (const [key, inner] of Object.entries(value)) {
        if (key === "cache_control") found.push(path === "" ? "(request)" : path);
        else walk(inner, path === "" ? key : `${path}.${key}`);
      }
    }
  };
  walk(body, "");
  return found;
}

describe("anthropic cache breakpoints", () => {
  it("automatic (default): the system block and the request level, same in every call; bodies are byte prefixes", () => {
    const sent = bodies({});
    for (const body of sent) {
      expect(breakpoints(body)).toEqual(["system[0]", "(request)"]);
      expect(body["cache_control"]).toEqual({ type: "ephemeral" });
    }
    expect(historyPrefixOf(JSON.stringify(sent[0]), JSON.stringify(sent[1]))).toBe(true);
    expect(historyPrefixOf(JSON.stringify(sent[1]), JSON.stringify(sent[2]))).toBe(true);
  });

  it("blocks: the last message and the previous request's end are marked, at most four in all", () => {
    const sent = bodies({ promptCacheBreakpoints: "blocks" });
    expect(breakpoints(sent[0]!)).toEqual(["system[0]", "messages[0].content[0]"]);
    // Call 2 marks call 1's end again (messages[0]) and its own end.
    expect(breakpoints(sent[1]!)).toEqual(["system[0]", "messages[0].content[0]", "messages[2].content[0]"]);
    // Call 3: the tool result call 2 ended on, and the new question.
    expect(breakpoints(sent[2]!)).toEqual(["system[0]", "messages[2].content[0]", "messages[4].content[0]"]);
    for (const body of sent) expect(breakpoints(body).length).toBeLessThanOrEqual(4);
  });

  it("marks the last tool when there is no system text, and nothing when caching is off", () => {
    const route = testRoute("anthropic", NO_UPSTREAM, { upstreamModel: "claude-sonnet-4-5", promptCaching: true });
    const prepared = prepareBody(route, modelRequest({ route, messages: [userText("q")], tools }));
    expect(prepared.kind === "ready" && breakpoints(prepared.body)).toEqual(["tools[0]", "(request)"]);
    const off = testRoute("anthropic", NO_UPSTREAM, { upstreamModel: "claude-sonnet-4-5", promptCaching: false });
    const plain = prepareBody(off, modelRequest({ route: off, messages: [userText("q")], system: "s", tools }));
    expect(plain.kind === "ready" && breakpoints(plain.body)).toEqual([]);
    expect(plain.kind === "ready" && plain.body["system"]).toBe("s");
  });

  it("disable_thinking turns thinking off and sends no effort", () => {
    const route = testRoute("anthropic", NO_UPSTREAM, { supportsThinking: true, efforts: ["low", "high"], effort: "high" });
    const request = modelRequest({ route, messages: [userText("summarize")] });
    request.spec!.disableThinking = true;
    const prepared = prepareBody(route, request);
    expect(prepared.kind === "ready" && prepared.body["thinking"]).toEqual({ type: "disabled" });
    expect(prepared.kind === "ready" && prepared.body["output_config"]).toBeUndefined();
  });
});
