/** Shared shape of BoundAdapter.prepare(): build the body, or turn a RequestRejection into a typed rejection. */
import type { PrepareResult } from "./adapter.ts";
import { RequestRejection } from "./adapter.ts";

export function prepareWith<Body extends object>(build: () => Body, send: (body: Body, signal: AbortSignal) => Promise<Response>): PrepareResult {
  let body: Body;
  try {
    body = build();
  } catch (error) {
    if (error instanceof RequestRejection) return { kind: "rejected", rejection: error.rejection, message: error.message };
    throw error;
  }
  return { kind: "ready", body: body as Readonly<Record<string, unknown>>, send: (signal) => send(body, signal) };
}
