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
 */
import type { ModelRequest } from "@byok/contracts";
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

export interface BoundAdapter {
  readonly route: Route;
  prepare(request: ModelRequest): PrepareResult;
  /** Map an error thrown by send() (the SDK boundary). */
  toSendFailure(error: unknown): SendFailure;
  createDecoder(writer: ModelEventWriter): StreamDecoder;
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
