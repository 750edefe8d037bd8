import { describe, expect, it } from "vitest";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { FailureKind, RunFailedSchema } from "@byok/contracts";
import { aiserver } from "@byok/cursor-protocol";
import { cancelledOutcome, endOutcomeOf, type SessionFailure } from "./failures.ts";

function failed(kind: FailureKind, message: string, retryable = false): SessionFailure {
  return { kind: "run_failed", failed: create(RunFailedSchema, { kind, message, retryable }) };
}

describe("errors on Cursor's wire", () => {
  it("maps a provider failure to unavailable with provider error details", () => {
    const outcome = endOutcomeOf(failed(FailureKind.PROVIDER, "429 rate limited upstream", true));
    expect(outcome).toMatchObject({ kind: "error", code: "unavailable", message: "429 rate limited upstream" });
    if (outcome.kind !== "error") throw new Error("expected an error");
    expect(outcome.details?.error).toBe(aiserver.ErrorDetails_Error.PROVIDER_ERROR);
    expect(outcome.details?.details).toMatchObject({ title: "Provider error", detail: "429 rate limited upstream", isRetryable: true });
    // The details survive the wire encoding.
    const decoded = fromBinary(aiserver.ErrorDetailsSchema, toBinary(aiserver.ErrorDetailsSchema, outcome.details!));
    expect(decoded.details?.isRetryable).toBe(true);
  });

  it.each([
    [FailureKind.PROTOCOL, "invalid_argument", "protocol error: duplicate block start"],
    [FailureKind.CLIENT, "unavailable", "duplicate block start"],
    [FailureKind.STORE, "internal", "duplicate block start"],
    [FailureKind.UNSPECIFIED, "internal", "duplicate block start"],
  ])("maps run failure kind %s to %s", (kind, code, message) => {
    expect(endOutcomeOf(failed(kind, "duplicate block start"))).toEqual({ kind: "error", code, message });
  });

  it("maps adapter failures", () => {
    const unknown = endOutcomeOf({ kind: "unknown_model", modelId: "gpt-9" });
    expect(unknown).toMatchObject({ kind: "error", code: "not_found" });
    expect(unknown.kind === "error" && unknown.details?.error).toBe(aiserver.ErrorDetails_Error.BAD_MODEL_NAME);
    expect(endOutcomeOf({ kind: "protocol", message: "root 3 is not JSON" })).toEqual({ kind: "error", code: "invalid_argument", message: "protocol error: root 3 is not JSON" });
    expect(endOutcomeOf({ kind: "client_blob", message: "no ack" })).toMatchObject({ code: "unavailable" });
    expect(endOutcomeOf({ kind: "store", message: "down" })).toMatchObject({ code: "internal" });
    expect(endOutcomeOf({ kind: "forbidden", message: "not yours" })).toMatchObject({ code: "permission_denied" });
    expect(endOutcomeOf({ kind: "invalid_request", message: "bad id" })).toMatchObject({ code: "invalid_argument" });
  });

  it("ends a cancelled run with canceled and never with provider details", () => {
    expect(cancelledOutcome("user pressed stop")).toEqual({ kind: "error", code: "canceled", message: "user pressed stop" });
    expect(cancelledOutcome("")).toEqual({ kind: "error", code: "canceled", message: "cancelled" });
  });

  it("never returns an empty message for a failed run", () => {
    expect(endOutcomeOf(failed(FailureKind.PROVIDER, ""))).toMatchObject({ message: "the run failed" });
  });
});
