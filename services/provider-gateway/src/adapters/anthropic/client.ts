/**
 * The Anthropic SDK client for a route and the one mapping of its errors into
 * SendFailure. The SDK's retries are off: the gateway retries itself, only
 * before the first streamed byte.
 */
import Anthropic from "@anthropic-ai/sdk";
import type { Logger } from "@byok/platform";
import type { Route } from "../../routes.ts";
import type { PassThroughRequest, PassThroughTarget } from "../adapter.ts";
import { sdkFetch } from "../sdk-fetch.ts";
import { sdkLogger } from "../sdk-logger.ts";
import { isContextOverflow } from "../../context-overflow.ts";
import { describeErrorBody, messageWithCause, retryAfterMs, type SendFailure } from "../../upstream-errors.ts";

export function createAnthropicClient(route: Route, log: Logger): Anthropic {
  return new Anthropic({
    apiKey: route.apiKey.reveal(),
    baseURL: route.baseUrl,
    defaultHeaders: { ...route.headers },
    maxRetries: 0,
    fetch: sdkFetch,
    timeout: route.headersTimeoutMs,
    logger: sdkLogger(log, "anthropic"),
    logLevel: "warn",
  });
}

/** The API version the SDK sends, used for relayed requests that name none. */
const ANTHROPIC_VERSION = "2023-06-01";

/** A relayed Messages (or count_tokens) request: x-api-key, the client's anthropic-version / anthropic-beta. */
export function anthropicPassThroughTarget(route: Route, request: PassThroughRequest): PassThroughTarget {
  const path = request.operation === "count_tokens" ? "/v1/messages/count_tokens" : "/v1/messages";
  const query = new URLSearchParams(request.query).toString();
  return {
    url: `${route.baseUrl}${path}${query === "" ? "" : `?${query}`}`,
    headers: { "anthropic-version": ANTHROPIC_VERSION, ...route.headers, ...request.headers, "x-api-key": route.apiKey.reveal() },
  };
}

export function anthropicSendFailure(error: unknown): SendFailure {
  if (error instanceof Anthropic.APIUserAbortError) return { kind: "aborted" };
  if (error instanceof Anthropic.APIConnectionTimeoutError) return { kind: "connection", message: error.message, timeout: true };
  if (error instanceof Anthropic.APIConnectionError) return { kind: "connection", message: messageWithCause(error), timeout: false };
  if (error instanceof Anthropic.APIError && typeof error.status === "number") {
    const body = describeErrorBody(error.error);
    return {
      kind: "http",
      status: error.status,
      message: body.message ?? error.message,
      providerCode: body.code,
      retryAfterMs: retryAfterMs(error.headers),
      contextOverflow: isContextOverflow("anthropic", body),
    };
  }
  return { kind: "connection", message: error instanceof Error ? error.message : String(error), timeout: false };
}
