/**
 * Shared by the adapters' stream strictness tests (adapters/<kind>/stream.test.ts):
 * one call of a plain request through the real adapter against the mock LLM,
 * checked against the run worker's strict ModelCycle, which must reach the
 * outcome the gateway reported (a typed failure, never a rejected stream).
 */
import { expect } from "vitest";
import type { ProviderKind } from "@byok/platform";
import type { MockLlm, MockResponse } from "@byok/test-support/mock-llm";
import { callThroughMock, cycleOutcome, modelRequest, testRoute, userText, type CallResult } from "../testing/call-kit.ts";

export async function cycleCheckedCall(llm: MockLlm, kind: ProviderKind, response: MockResponse): Promise<CallResult> {
  const route = testRoute(kind, llm);
  const result = await callThroughMock(llm, route, modelRequest({ route, messages: [userText("hi")] }), response);
  if (result.summary.outcome === "failed") expect(cycleOutcome(result.events)).toEqual({ kind: "failed", failure: result.summary.failure?.kind });
  else expect(cycleOutcome(result.events).kind).toBe("completed");
  return result;
}
