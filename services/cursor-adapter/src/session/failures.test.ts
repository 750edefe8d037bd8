import { describe, expect, it } from "vitest";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { FailureKind, RunFailedSchema } from "@byok/contracts";
import { aiserver } from "@byok/cursor-protocol";
import { StoreFailure } from "@byok/store-client";
import { BlobNotSyncedError } from "../checkpoint/client-blobs.ts";
import { KvError } from "../checkpoint/kv-channel.ts";
import { TodoBlobError } from "../checkpoint/todo-blobs.ts";
import { PromptAssetError } from "../prompting/prompt-assets.ts";
import { HistoryImportError } from "../request/client-history.ts";
import { RootParseError } from "../root-codec/root-import.ts";
import { cancelledOutcome, closeKindOf, endOutcomeOf, SessionError, sessionFailureOf, type SessionFailure } from "./failures.ts";
import { BusPublishError } from "./run-bus.ts";
import { RoundCommitError } from "./tool-round-commits.ts";

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

  it("maps a run the accounting stopped to resource_exhausted with its message, the limit and the wait", () => {
    const message = "Your limit of 5 requests per minute is reached; it resets at 2026-03-10T12:01:00.000Z (UTC).";
    const perMinute = endOutcomeOf({ kind: "run_failed", failed: create(RunFailedSchema, { kind: FailureKind.OVER_LIMIT, message, limit: "requests_per_minute", retryAfterMs: 30_000 }) });
    expect(perMinute).toMatchObject({ kind: "error", code: "resource_exhausted", message });
    if (perMinute.kind !== "error") throw new Error("expected an error");
    const decoded = fromBinary(aiserver.ErrorDetailsSchema, toBinary(aiserver.ErrorDetailsSchema, perMinute.details!));
    expect(decoded).toMatchObject({ error: aiserver.ErrorDetails_Error.CUSTOM_MESSAGE, isExpected: true });
    expect(decoded.details).toMatchObject({ title: "Usage limit reached", detail: message, isRetryable: true, additionalInfo: { limit: "requests_per_minute", retry_after_ms: "30000" } });

    const budget = endOutcomeOf({ kind: "run_failed", failed: create(RunFailedSchema, { kind: FailureKind.OVER_LIMIT, message: "budget", limit: "member_budget", retryAfterMs: 36_000_000 }) });
    expect(budget.kind === "error" && budget.details?.details?.isRetryable).toBe(false);
    expect(closeKindOf({ kind: "run_failed", failed: create(RunFailedSchema, { kind: FailureKind.OVER_LIMIT }) })).toBe(FailureKind.OVER_LIMIT);
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

describe("errors of the session layer", () => {
  /** Failure kind, EndStream code and the owner's failure kind of an error. */
  function mapped(error: unknown): [string, string, string] {
    const failure = sessionFailureOf(error);
    const outcome = endOutcomeOf(failure);
    return [failure.kind, outcome.kind === "error" ? outcome.code : "ok", FailureKind[closeKindOf(failure)]];
  }

  it.each([
    ["a SessionError", new SessionError({ kind: "unknown_model", modelId: "gpt-9" }), ["unknown_model", "not_found", "CLIENT"]],
    ["a KV failure", new KvError("timeout", "no set_blob_result"), ["client_blob", "unavailable", "CLIENT"]],
    ["an unreadable history", new HistoryImportError("root 2 is not a blob id"), ["protocol", "invalid_argument", "PROTOCOL"]],
    ["an unparsable root", new RootParseError("root 0 is not JSON"), ["protocol", "invalid_argument", "PROTOCOL"]],
    ["an unreadable todo blob", new TodoBlobError("todo 1 is not a TodoItem"), ["protocol", "invalid_argument", "PROTOCOL"]],
    ["another member's conversation", new StoreFailure("forbidden", "history.import", "belongs to another member"), ["forbidden", "permission_denied", "CLIENT"]],
    ["a store that is down", new StoreFailure("unavailable", "history.import", "no responders"), ["store", "internal", "STORE"]],
    ["a store refusal", new StoreFailure("not_found", "revision.messages", "no revision"), ["store", "internal", "STORE"]],
    ["a bus that takes no publish", new BusPublishError("cannot publish run r"), ["bus", "unavailable", "CLIENT"]],
    ["a checkpoint ahead of its blobs", new BlobNotSyncedError("blob ab never sent"), ["internal", "internal", "CLIENT"]],
    ["a commit that cannot be projected", new RoundCommitError("staged round without assistant"), ["internal", "internal", "CLIENT"]],
    ["broken prompt files", new PromptAssetError("missing agent.md"), ["internal", "internal", "CLIENT"]],
    ["a bug", new TypeError("x is undefined"), ["internal", "internal", "CLIENT"]],
    ["a thrown string", "boom", ["internal", "internal", "CLIENT"]],
  ])("maps %s", (_what, error, expected) => {
    expect(mapped(error)).toEqual(expected);
  });

  it("keeps the error's message for Cursor", () => {
    expect(endOutcomeOf(sessionFailureOf(new StoreFailure("unavailable", "blob.get", "no responders")))).toMatchObject({
      message: "store blob.get: unavailable: no responders",
    });
    expect(endOutcomeOf(sessionFailureOf("boom"))).toMatchObject({ message: "boom" });
  });
});
