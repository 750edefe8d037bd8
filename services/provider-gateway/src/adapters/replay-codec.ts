/**
 * Replay state bytes: UTF-8 JSON with a version field, written and read only
 * by the adapter of the kind that produced it. A replay state from another
 * kind or route, or one this version cannot read, is not replayed (the
 * visible text and tool calls of the message still are).
 */
import type { ReplayState } from "@byok/contracts";
import type { z } from "zod";
import type { Route } from "../routes.ts";
import type { ReplayInit } from "../events.ts";

export function encodeReplay(route: Route, value: unknown): ReplayInit {
  return { providerKind: route.kind, routeId: route.id, data: new TextEncoder().encode(JSON.stringify(value)) };
}

export function decodeReplay<T>(replay: ReplayState | undefined, route: Route, schema: z.ZodType<T>): T | undefined {
  if (replay === undefined || replay.providerKind !== route.kind || replay.routeId !== route.id) return undefined;
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(replay.data));
  } catch {
    return undefined;
  }
  const parsed = schema.safeParse(json);
  return parsed.success ? parsed.data : undefined;
}
