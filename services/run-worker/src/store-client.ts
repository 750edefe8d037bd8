/**
 * The store as the run worker sees it: typed request/reply on
 * `names.store(op)`. Store errors (the response's `error`) and bus errors
 * (timeout, no store listening) are mapped here, once, into StoreFailure.
 * `unavailable` (no store answering, or the store's database unreachable) is
 * the one kind a caller may retry.
 */
import type { DescMessage, MessageInitShape, MessageShape } from "@bufbuild/protobuf";
import { STORE_OPERATIONS, StoreErrorKind, type BusNames, type StoreError, type StoreOperation } from "@byok/contracts";
import { BusError, busRequest, type NatsConnection } from "@byok/platform";

export type StoreFailureKind = "not_found" | "not_active" | "head_mismatch" | "invalid" | "forbidden" | "internal" | "unavailable";

export class StoreFailure extends Error {
  override readonly name = "StoreFailure";
  readonly kind: StoreFailureKind;
  readonly operation: string;
  constructor(kind: StoreFailureKind, operation: string, message: string, options?: { cause?: unknown }) {
    super(`store ${operation}: ${kind}: ${message}`, options);
    this.kind = kind;
    this.operation = operation;
  }
}

export function storeFailureKind(kind: StoreErrorKind): StoreFailureKind {
  switch (kind) {
    case StoreErrorKind.NOT_FOUND:
      return "not_found";
    case StoreErrorKind.NOT_ACTIVE:
      return "not_active";
    case StoreErrorKind.HEAD_MISMATCH:
      return "head_mismatch";
    case StoreErrorKind.INVALID:
      return "invalid";
    case StoreErrorKind.FORBIDDEN:
      return "forbidden";
    case StoreErrorKind.UNAVAILABLE:
      return "unavailable";
    case StoreErrorKind.INTERNAL:
    case StoreErrorKind.UNSPECIFIED:
      return "internal";
    default:
      return "internal";
  }
}

type WithError = { error?: StoreError | undefined };

export class StoreClient {
  readonly #nc: NatsConnection;
  readonly #names: BusNames;
  readonly #timeoutMs: number;

  constructor(nc: NatsConnection, names: BusNames, timeoutMs: number) {
    this.#nc = nc;
    this.#names = names;
    this.#timeoutMs = timeoutMs;
  }

  /** One store operation; resolves with the response or throws StoreFailure. */
  async call<I extends DescMessage, O extends DescMessage>(operation: StoreOperation<I, O>, request: MessageInitShape<I>): Promise<MessageShape<O>> {
    let response: MessageShape<O>;
    try {
      response = await busRequest(this.#nc, this.#names.store(operation.name), operation.request, request, operation.response, { timeoutMs: this.#timeoutMs });
    } catch (cause) {
      if (cause instanceof BusError) {
        const kind = cause.kind === "decode" ? "internal" : "unavailable";
        throw new StoreFailure(kind, operation.name, cause.message, { cause });
      }
      throw cause;
    }
    const error = (response as WithError).error;
    if (error !== undefined && error.kind !== StoreErrorKind.UNSPECIFIED) {
      throw new StoreFailure(storeFailureKind(error.kind), operation.name, error.message);
    }
    return response;
  }

  beginRun(request: MessageInitShape<typeof STORE_OPERATIONS.beginRun.request>) {
    return this.call(STORE_OPERATIONS.beginRun, request);
  }

  appendMessages(request: MessageInitShape<typeof STORE_OPERATIONS.appendMessages.request>) {
    return this.call(STORE_OPERATIONS.appendMessages, request);
  }

  finishRun(request: MessageInitShape<typeof STORE_OPERATIONS.finishRun.request>) {
    return this.call(STORE_OPERATIONS.finishRun, request);
  }

  getRun(runId: string) {
    return this.call(STORE_OPERATIONS.getRun, { runId });
  }

  revisionMessages(revisionId: string) {
    return this.call(STORE_OPERATIONS.getRevisionMessages, { revisionId });
  }

  createToolRound(request: MessageInitShape<typeof STORE_OPERATIONS.createToolRound.request>) {
    return this.call(STORE_OPERATIONS.createToolRound, request);
  }

  commitToolResult(request: MessageInitShape<typeof STORE_OPERATIONS.commitToolResult.request>) {
    return this.call(STORE_OPERATIONS.commitToolResult, request);
  }

  getOpenToolRound(runId: string) {
    return this.call(STORE_OPERATIONS.getOpenToolRound, { runId });
  }
}
