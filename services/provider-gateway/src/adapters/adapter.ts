/**
 * The one adapter interface every endpoint kind implements. An adapter is
 * bound to a route once (SDK client created with the route's key, base URL,
 * headers, SDK retries off) and then, per call:
 * - prepare(): the neutral ModelRequest -> the endpoint's request body
 *   (pure and deterministic: the same request gives byte-identical JSON), or
 *   a typed rejection (ModelSpec or history the endpoint cannot take);
 * - the prepared send(): one HTTP attempt, resolving with the raw streaming
 *   Response once 2xx headers arrived, throwing the SDK's error otherwise;
 * - createDecoder(): the endpoint's SSE events -> ModelEvents via the writer.
 * For the same-shape path of the HTTP front, passThroughTarget() says where
 * and with which credentials a client's own request body for this endpoint
 * kind goes (the relay sends it itself: nothing of it is built or parsed,
 * so the SDK has no part in it), and hasOpaqueReplay() tells whether a
 * call's replay state holds anything beyond the visible content.
 */
import type { ModelRequest, ReplayState } from "@byok/contracts";
import type { Logger, ProviderKind } from "@byok/platform";
import type { ModelEventWriter } from "../events.ts";
import type { Route } from "../routes.ts";
import type { SseEvent } from "../sse.ts";
import type { SendFailure } from "../upstream-errors.ts";

export type RejectionKind = "config" | "invalid_request";

export type PrepareResult =
  | {
      readonly kind: "ready";
      /** The exact JSON body that will be sent (for logs of its size and for tests). */
      readonly body: Readonly<Record<string, unknown>>;
      send(signal: AbortSignal): Promise<Response>;
    }
  | { readonly kind: "rejected"; readonly rejection: RejectionKind; readonly message: string };

export type DecodeStep = "continue" | "end";

export interface StreamDecoder {
  /**
   * One SSE event. Returns "end" when the endpoint's stream is over ([DONE])
   * and nothing more may be read. Throws ProtocolViolation for a broken stream.
   */
  onEvent(event: SseEvent): DecodeStep;
  /** The body ended: emit the terminal outcome (done, or a typed failure). */
  onEnd(): void;
}

/** Where a relayed request goes: the endpoint URL and the headers (credentials included) it needs. */
export interface PassThroughTarget {
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
}

/** A client's own request for this endpoint kind (HTTP front, same shape), sent with the minimal change. */
export interface PassThroughRequest {
  /** The kind's model call endpoint, or Anthropic's token counting. */
  readonly operation: "create" | "count_tokens";
  /** The client's body with the upstream model name (and stream usage option) set. */
  readonly body: Readonly<Record<string, unknown>>;
  readonly stream: boolean;
  /** Client headers passed on (anthropic-beta, anthropic-version). */
  readonly headers: Readonly<Record<string, string>>;
  readonly query: Readonly<Record<string, string>>;
}

export interface BoundAdapter {
  readonly route: Route;
  prepare(request: ModelRequest): PrepareResult;
  /** Map an error thrown by send() (the SDK boundary). */
  toSendFailure(error: unknown): SendFailure;
  createDecoder(writer: ModelEventWriter): StreamDecoder;
  /** The URL and headers of a relayed client request (query included). */
  passThroughTarget(request: PassThroughRequest): PassThroughTarget;
  /** Whether this route's replay state carries opaque items (reasoning the visible content cannot rebuild). */
  hasOpaqueReplay(replay: ReplayState): boolean;
}

export interface ProviderAdapter {
  readonly kind: ProviderKind;
  /** `log` receives the SDK's own log lines. */
  bind(route: Route, log: Logger): BoundAdapter;
}

/** Thrown inside request builders; prepare() turns it into a rejection. */
export class RequestRejection extends Error {
  override readonly name = "RequestRejection";
  readonly rejection: RejectionKind;
  constructor(rejection: RejectionKind, message: string) {
    super(message);
    this.rejection = rejection;
  }
}
