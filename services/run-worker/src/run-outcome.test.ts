import { describe, expect, it } from "vitest";
import { create } from "@bufbuild/protobuf";
import { FailureKind, ModelFailureKind, RunRecordSchema, RunStatus, StateEventSchema, UsageSchema } from "@byok/contracts";
import { cycleFailed, outcomeOfRecord, statusOf, stopped, storeFailed, terminalEvent, withClientsReason } from "./run-outcome.ts";
import { StoreFailure } from "@byok/store-client";

const failure = (origin: "provider" | "protocol", kind: ModelFailureKind) => ({
  origin,
  kind,
  message: "m",
  retryable: origin === "provider",
  partialText: "secret partial answer",
  partialReasoning: "",
  usage: undefined,
  providerCode: "",
  retryAfterMs: 0,
});

describe("run outcomes", () => {
  it("maps provider-reported failures to PROVIDER with the model failure kind, broken streams to PROTOCOL", () => {
    expect(cycleFailed(failure("provider", ModelFailureKind.RATE_LIMITED))).toMatchObject({
      kind: "failed",
      failure: { kind: FailureKind.PROVIDER, modelFailureKind: ModelFailureKind.RATE_LIMITED, retryable: true },
    });
    expect(cycleFailed(failure("protocol", ModelFailureKind.PROTOCOL))).toMatchObject({ kind: "failed", failure: { kind: FailureKind.PROTOCOL } });
  });

  it("maps a call the accounting refused to OVER_LIMIT with the limit and when it resets", () => {
    const outcome = cycleFailed({ ...failure("provider", ModelFailureKind.OVER_LIMIT), message: "Your daily budget of $1 is used up", providerCode: "member_budget", retryAfterMs: 42_000 });
    expect(outcome).toMatchObject({ kind: "failed", failure: { kind: FailureKind.OVER_LIMIT, modelFailureKind: ModelFailureKind.OVER_LIMIT, limit: "member_budget", retryAfterMs: 42_000 } });
    expect(terminalEvent(outcome)).toMatchObject({
      event: { case: "terminal", value: { outcome: { case: "failed", value: { kind: FailureKind.OVER_LIMIT, limit: "member_budget", retryAfterMs: 42_000, message: "Your daily budget of $1 is used up" } } } },
    });
  });

  it("never carries partial model output into the failure message", () => {
    const outcome = cycleFailed(failure("provider", ModelFailureKind.TRUNCATED));
    expect(JSON.stringify(terminalEvent(outcome))).not.toContain("secret partial answer");
  });

  it("treats a lost ownership as cancelled (superseded) and other store errors as STORE failures", () => {
    expect(storeFailed(new StoreFailure("not_active", "run.append", "x")).kind).toBe("cancelled");
    expect(storeFailed(new StoreFailure("head_mismatch", "run.append", "x"))).toMatchObject({ kind: "failed", failure: { kind: FailureKind.STORE } });
    expect(storeFailed(new StoreFailure("unavailable", "run.append", "x"))).toMatchObject({ failure: { retryable: true } });
  });

  it("cancels on client commands and abandons (hands over) on shutdown", () => {
    expect(stopped({ kind: "cancel_command", reason: "stop" })).toEqual({ kind: "cancelled", reason: "stop" });
    expect(stopped({ kind: "client_closed", error: "socket reset", failureKind: FailureKind.UNSPECIFIED })).toMatchObject({
      kind: "failed",
      failure: { kind: FailureKind.CLIENT, message: "client closed: socket reset" },
    });
    expect(stopped({ kind: "client_closed", error: "protocol error: unknown exec id 9", failureKind: FailureKind.PROTOCOL })).toMatchObject({
      kind: "failed",
      failure: { kind: FailureKind.PROTOCOL },
    });
    expect(stopped({ kind: "shutdown" }).kind).toBe("abandoned");
  });

  it("builds exactly one terminal per outcome", () => {
    const completed = create(StateEventSchema, terminalEvent({ kind: "completed", usage: create(UsageSchema) }));
    expect(completed.event.case === "terminal" && completed.event.value.outcome.case).toBe("completed");
    const failedEvent = create(StateEventSchema, terminalEvent(cycleFailed(failure("provider", ModelFailureKind.AUTH))));
    expect(failedEvent.event.case === "terminal" && failedEvent.event.value.outcome).toMatchObject({
      case: "failed",
      value: { kind: FailureKind.PROVIDER, modelFailureKind: ModelFailureKind.AUTH, retryable: true },
    });
  });

  it("reads a terminal run record back into the same outcome", () => {
    const record = create(RunRecordSchema, { status: RunStatus.FAILED, failureKind: FailureKind.CLIENT, failureMessage: "blob ack timeout" });
    const outcome = outcomeOfRecord(record);
    expect(outcome).toMatchObject({ kind: "failed", failure: { kind: FailureKind.CLIENT, message: "blob ack timeout" } });
    expect(statusOf(outcome)).toBe(RunStatus.FAILED);
    expect(outcomeOfRecord(create(RunRecordSchema, { status: RunStatus.CANCELLED, failureMessage: "superseded" }))).toEqual({ kind: "cancelled", reason: "superseded" });
  });

  it("lets the client's own stop replace a 'client gone' cancellation, and nothing else", () => {
    const gone = { kind: "cancelled", reason: "client gone: no client is listening" } as const;
    const closed = { kind: "client_closed", error: "exec 1 answered again", failureKind: FailureKind.PROTOCOL } as const;
    const replaced = withClientsReason(gone, closed);
    expect(replaced.kind === "failed" && replaced.failure.kind).toBe(FailureKind.PROTOCOL);
    expect(withClientsReason(gone, { kind: "cancel_command", reason: "stop" })).toEqual({ kind: "cancelled", reason: "stop" });
    expect(withClientsReason(gone, undefined)).toBe(gone);
    expect(withClientsReason(gone, { kind: "shutdown" })).toBe(gone);
    const completed = { kind: "completed", usage: create(UsageSchema, {}) } as const;
    expect(withClientsReason(completed, closed)).toBe(completed);
  });
});
