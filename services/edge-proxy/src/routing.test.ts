import { describe, expect, it } from "vitest";
import { create, toBinary, toJsonString } from "@bufbuild/protobuf";
import { agent, aiserver } from "@byok/cursor-protocol";
import { classifyRequest, inspectBidiAppend, routeForModel } from "./routing.ts";

function appendBody(requestId: string, seqno: bigint, message: agent.AgentClientMessage | string): Uint8Array {
  const data = typeof message === "string" ? message : Buffer.from(toBinary(agent.AgentClientMessageSchema, message)).toString("hex");
  return toBinary(aiserver.BidiAppendRequestSchema, create(aiserver.BidiAppendRequestSchema, { requestId: { requestId }, appendSeqno: seqno, data }));
}

describe("level 1: classifyRequest", () => {
  it("routes the agent transport, model lists and server config specially and everything else upstream", () => {
    expect(classifyRequest("POST", "/agent.v1.AgentService/RunSSE")).toEqual({ kind: "run_sse" });
    expect(classifyRequest("POST", "/aiserver.v1.BidiService/BidiAppend")).toEqual({ kind: "bidi_append" });
    expect(classifyRequest("POST", "/aiserver.v1.AiService/AvailableModels?x=1")).toMatchObject({ kind: "model_list", merge: "concat" });
    expect(classifyRequest("POST", "/agent.v1.AgentService/GetUsableModels")).toMatchObject({ kind: "model_list", merge: "concat" });
    expect(classifyRequest("POST", "/aiserver.v1.AiService/GetUsableModels")).toMatchObject({ kind: "model_list", merge: "concat" });
    expect(classifyRequest("POST", "/aiserver.v1.AiService/GetDefaultModelNudgeData")).toMatchObject({ kind: "model_list", merge: "fallback" });
    expect(classifyRequest("POST", "/aiserver.v1.ServerConfigService/GetServerConfig")).toEqual({ kind: "server_config" });
    expect(classifyRequest("POST", "/aiserver.v1.AiService/GetServerConfig")).toEqual({ kind: "server_config" });
    expect(classifyRequest("POST", "/aiserver.v1.DashboardService/GetMe")).toEqual({ kind: "upstream" });
    expect(classifyRequest("GET", "/agent.v1.AgentService/RunSSE")).toEqual({ kind: "upstream" });
    expect(classifyRequest("POST", "/agent.v1.AgentService/RunSSEx")).toEqual({ kind: "upstream" });
  });
});

describe("level 2", () => {
  const byok = new Set(["team-gpt"]);

  it("takes the model from requested_model, else model_details", () => {
    const viaRequested = create(agent.AgentClientMessageSchema, {
      message: { case: "runRequest", value: { requestedModel: { modelId: "team-gpt" }, modelDetails: { modelId: "other" }, conversationId: "c1" } },
    });
    expect(inspectBidiAppend(appendBody("r1", 0n, viaRequested), "application/proto")).toEqual({
      kind: "run_start",
      requestId: "r1",
      seqno: 0n,
      modelId: "team-gpt",
      conversationId: "c1",
    });
    const viaDetails = create(agent.AgentClientMessageSchema, { message: { case: "runRequest", value: { modelDetails: { modelId: "claude-4" } } } });
    expect(inspectBidiAppend(appendBody("r2", 0n, viaDetails), "application/proto")).toMatchObject({ kind: "run_start", modelId: "claude-4", conversationId: undefined });
    const prewarm = create(agent.AgentClientMessageSchema, { message: { case: "prewarmRequest", value: { requestedModel: { modelId: "team-gpt" } } } });
    expect(inspectBidiAppend(appendBody("r3", 0n, prewarm), "application/proto")).toMatchObject({ kind: "run_start", modelId: "team-gpt" });
  });

  it("routes BYOK models locally and everything else (including no model) upstream", () => {
    expect(routeForModel("team-gpt", byok)).toBe("local");
    expect(routeForModel("gpt-5", byok)).toBe("upstream");
    expect(routeForModel(undefined, byok)).toBe("upstream");
  });

  it("classifies later messages, foreign payloads and garbage", () => {
    const heartbeat = create(agent.AgentClientMessageSchema, { message: { case: "clientHeartbeat", value: {} } });
    expect(inspectBidiAppend(appendBody("r1", 4n, heartbeat), "application/proto")).toEqual({ kind: "agent_message", requestId: "r1", seqno: 4n });
    expect(inspectBidiAppend(appendBody("r1", 0n, "not hex"), "application/proto")).toEqual({ kind: "foreign", requestId: "r1", seqno: 0n });
    expect(inspectBidiAppend(appendBody("r1", 0n, "ffff"), "application/proto")).toMatchObject({ kind: "foreign" });
    expect(inspectBidiAppend(Buffer.from([0xff, 0xff, 0xff]), "application/proto")).toEqual({ kind: "unreadable" });
    expect(inspectBidiAppend(appendBody("", 0n, heartbeat), "application/proto")).toEqual({ kind: "unreadable" });
  });

  it("reads JSON-encoded appends too", () => {
    const run = create(agent.AgentClientMessageSchema, { message: { case: "runRequest", value: { requestedModel: { modelId: "team-gpt" } } } });
    const json = toJsonString(
      aiserver.BidiAppendRequestSchema,
      create(aiserver.BidiAppendRequestSchema, { requestId: { requestId: "r9" }, appendSeqno: 0n, data: Buffer.from(toBinary(agent.AgentClientMessageSchema, run)).toString("hex") }),
    );
    expect(inspectBidiAppend(Buffer.from(json), "application/json")).toMatchObject({ kind: "run_start", requestId: "r9", modelId: "team-gpt" });
  });
});
