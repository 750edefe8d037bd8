/**
 * GET /v1/models: the gateway's BYOK models (ids; aliases are accepted as
 * model names but not listed), in the Anthropic shape when the client sends
 * anthropic-version (Claude Code's gateway model discovery), else the OpenAI
 * shape.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Route } from "../routes.ts";
import { sendJson } from "./http-answers.ts";

/** Model lists carry a creation time; the gateway's models have none, so every entry says the Unix epoch. */
const CREATED_AT = "1970-01-01T00:00:00Z";

export function modelList(res: ServerResponse, req: IncomingMessage, routes: readonly Route[]): void {
  if (req.headers["anthropic-version"] !== undefined) {
    const data = routes.map((r) => ({ type: "model", id: r.id, display_name: r.displayName, created_at: CREATED_AT }));
    sendJson(res, 200, { data, has_more: false, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null });
    return;
  }
  sendJson(res, 200, { object: "list", data: routes.map((r) => ({ id: r.id, object: "model", created: 0, owned_by: r.providerId })) });
}
