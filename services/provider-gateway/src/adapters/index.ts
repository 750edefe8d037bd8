/** The adapter of each endpoint kind, and binding every route to its adapter at start-up. */
import type { Logger, ProviderKind } from "@byok/platform";
import type { RouteTable } from "../routes.ts";
import type { BoundAdapter, ProviderAdapter } from "./adapter.ts";
import { anthropicAdapter } from "./anthropic/index.ts";
import { openAiChatAdapter } from "./openai-chat/index.ts";
import { openAiResponsesAdapter } from "./openai-responses/index.ts";

export function adapterFor(kind: ProviderKind): ProviderAdapter {
  switch (kind) {
    case "openai-chat":
      return openAiChatAdapter;
    case "openai-responses":
      return openAiResponsesAdapter;
    case "anthropic":
      return anthropicAdapter;
    default: {
      const never: never = kind;
      throw new Error(`no adapter for provider kind ${String(never)}`);
    }
  }
}

export function bindRoutes(routes: RouteTable, log: Logger): Map<string, BoundAdapter> {
  const bound = new Map<string, BoundAdapter>();
  for (const route of routes.values()) bound.set(route.id, adapterFor(route.kind).bind(route, log));
  return bound;
}
