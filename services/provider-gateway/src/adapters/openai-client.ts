/**
 * The OpenAI SDK client for a route (both OpenAI endpoint kinds) and the one
 * mapping of its errors into SendFailure. The SDK's retries are off: the
 * gateway retries itself, only before the first streamed byte.
 */
import OpenAI from "openai";
import type { Logger } from "@byok/platform";
import type { Route } from "../routes.ts";
import type { PassThroughRequest, PassThroughTarget } from "./adapter.ts";
import { sdkFetch } from "./sdk-fetch.ts";
import { sdkLogger } from "./sdk-logger.ts";
import { isContextOverflow } from "../context-overflow.ts";
import { describeErrorBody, messageWithCause, retryAfterMs, type SendFailure } from "../upstream-errors.ts";

export function createOpenAiClient(route: Route, log: Logger): OpenAI {
  return new OpenAI({
    apiKey: route.apiKey.reveal(),
    baseURL: route.baseUrl,
    defaultHeaders: { ...route.headers },
    maxRetries: 0,
    fetch: sdkFetch,
    timeout: route.headersTimeoutMs,
    logger: sdkLogger(log, "openai"),
    logLevel: "warn",
  });
}

/** A relayed client request to `path` of the route (OpenAI kinds: Bearer key). */
export function openAiPassThroughTarget(route: Route, path: string, request: PassThroughRequest): PassThroughTarget {
  const query = new URLSearchParams(request.query).toString();
  return {
    url: `${route.baseUrl}${path}${query === "" ? "" : `?${query}`}`,
    headers: { ...route.headers, ...request.headers, authorization: `Bearer ${route.apiKey.reveal()}` },
  };
}

export function openAiSendFailure(error: unknown): SendFailure {
  if (error instanceof OpenAI.APIUserAbortError) return { kind: "aborted" };
  if (error instanceof OpenAI.APIConnectionTimeoutError) return { kind: "connection", message: error.message, timeout: true };
  if (error instanceof OpenAI.APIConnectionError) return { kind: "connection", message: messageWithCause(error), timeout: false };
  if (error instanceof OpenAI.APIError && typeof error.status === "number") {
    const body = describeErrorBody(error.error);
    const providerCode = body.code ?? error.code ?? undefined;
    const message = body.message ?? error.message;
    return {
      kind: "http",
      status: error.status,
      message,
      providerCode,
      retryAfterMs: retryAfterMs(error.headers),
      // Both OpenAI endpoint kinds report an overflow the same way before the stream.
      contextOverflow: isContextOverflow("openai-chat", { code: providerCode, message }),
    };
  }
  return { kind: "connection", message: error instanceof Error ? error.message : String(error), timeout: false };
}
