import { describe, expect, it } from "vitest";
import {
  clientModelCallId,
  clientModelCallIndexOf,
  fallbackUserMessageClientId,
  InvalidIdError,
  isProviderCallId,
  isRunId,
  nextProviderCallIndex,
  NO_PROVIDER_CALL,
  parseClientModelCallIndex,
  parseConversationId,
  parseMemberId,
  parseProviderCallId,
  parseProviderCallIndex,
  parseRunId,
  providerCallId,
  runCommandIds,
  toolRoundId,
} from "./ids.ts";

const run = parseRunId("req-7_A");

describe("id formats", () => {
  it("accepts only subject-token run ids", () => {
    expect(parseRunId("0b8c2f3e-1d2a-4c1b-9f0e-123456789abc")).toBe("0b8c2f3e-1d2a-4c1b-9f0e-123456789abc");
    for (const bad of ["", "a.b", "a*", "a>", "a b", "a:b"]) {
      expect(isRunId(bad)).toBe(false);
      expect(() => parseRunId(bad)).toThrow(InvalidIdError);
    }
    expect(() => parseConversationId("")).toThrow(InvalidIdError);
    expect(() => parseMemberId("")).toThrow(InvalidIdError);
    expect(parseConversationId("conv.with.dots")).toBe("conv.with.dots");
  });

  it("counts model calls from 1 for the provider and from 0 for the client, in the same call ids as on the wire", () => {
    const first = nextProviderCallIndex(NO_PROVIDER_CALL);
    const second = nextProviderCallIndex(first);
    expect([first, second]).toEqual([1, 2]);
    expect(providerCallId(run, first)).toBe("req-7_A:1");
    expect(clientModelCallIndexOf(first)).toBe(0);
    expect(clientModelCallId(run, clientModelCallIndexOf(second))).toBe("req-7_A:1");
    expect(() => providerCallId(run, NO_PROVIDER_CALL)).toThrow(InvalidIdError);
    expect(() => clientModelCallIndexOf(NO_PROVIDER_CALL)).toThrow(InvalidIdError);
    expect(() => parseProviderCallIndex(-1)).toThrow(InvalidIdError);
    expect(() => parseClientModelCallIndex(0.5)).toThrow(InvalidIdError);
  });

  it("parses provider call ids back", () => {
    expect(parseProviderCallId("req-7_A:12")).toBe("req-7_A:12");
    for (const bad of ["req", "req:0", "req:", "a.b:1", "req:1:round:1"]) expect(isProviderCallId(bad)).toBe(false);
  });

  it("names tool rounds, commands and the fallback user message id after the run", () => {
    expect(toolRoundId(run, parseProviderCallIndex(3))).toBe("req-7_A:round:3");
    expect(toolRoundId(run, NO_PROVIDER_CALL)).toBe("req-7_A:round:resume");
    expect(runCommandIds.cancel(run)).toBe("req-7_A:cancel");
    expect(runCommandIds.clientClosed(run)).toBe("req-7_A:closed");
    expect(runCommandIds.toolResult(run, "call_1")).toBe("req-7_A:result:call_1");
    expect(fallbackUserMessageClientId(run)).toBe("user:req-7_A");
  });
});
