/**
 * The JSON payload of one SSE event. Providers' JSON is not canonical (padding,
 * key order), so it is always parsed, never matched as text. A payload that
 * does not parse is a protocol violation, except for the last event of a body
 * that ended without its blank line: that is a cut stream (truncated).
 */
import { ProtocolViolation } from "../events.ts";
import type { SseEvent } from "../sse.ts";

export type EventPayload =
  | { readonly kind: "json"; readonly value: Record<string, unknown> }
  | { readonly kind: "done-marker" }
  | { readonly kind: "cut" };

export function parseEventPayload(event: SseEvent): EventPayload {
  const data = event.data.trim();
  if (data === "[DONE]") return { kind: "done-marker" };
  let value: unknown;
  try {
    value = JSON.parse(data);
  } catch {
    if (!event.terminated) return { kind: "cut" };
    throw new ProtocolViolation(`event data is not JSON (${data.length} chars)`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new ProtocolViolation("event data is not a JSON object");
  return { kind: "json", value: value as Record<string, unknown> };
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export function stringField(record: Record<string, unknown>, key: string): string | undefined {
  const value = record[key];
  return typeof value === "string" ? value : undefined;
}

export function numberField(record: Record<string, unknown> | undefined, key: string): number | undefined {
  const value = record?.[key];
  return typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : undefined;
}

export function recordField(record: Record<string, unknown> | undefined, key: string): Record<string, unknown> | undefined {
  const value = record?.[key];
  return isRecord(value) ? value : undefined;
}

/** A token count as the uint64 the Usage message carries; undefined stays undefined. */
export function tokens(value: number | undefined): bigint | undefined {
  return value === undefined ? undefined : BigInt(Math.trunc(value));
}
