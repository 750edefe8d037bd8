/**
 * POST /v1/messages/count_tokens. On an Anthropic route the request goes to
 * the endpoint's own count_tokens (same-shape relay, no model call, nothing
 * to account). Other endpoint kinds have no such operation: the answer is the
 * gateway's estimate of the translated prompt (about 4 characters per token,
 * accounting/estimate-tokens.ts), clearly an estimate, never a count.
 */
import { estimateRequestTokens } from "../accounting/estimate-tokens.ts";
import { sendJson } from "./http-answers.ts";
import type { InboundCall } from "./inbound-call.ts";
import { relaySameShape } from "./same-shape.ts";
import { messagesRequest } from "./translate/messages-request.ts";

export async function countTokens(call: InboundCall): Promise<void> {
  if (call.route.kind === "anthropic") {
    await relaySameShape(call, "count_tokens");
    return;
  }
  const request = messagesRequest(call.body, { memberId: call.memberId, requestId: call.requestId, route: call.route, forCounting: true });
  sendJson(call.res, 200, { input_tokens: estimateRequestTokens(request) });
}
