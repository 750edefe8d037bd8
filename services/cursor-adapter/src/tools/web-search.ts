/**
 * WebSearch: the user approves in Cursor (web_search_request_query), then the
 * gateway asks the configured search backend. The model gets the hits as JSON
 * (title, url, snippet); the card gets them as references. A rejected
 * approval is the tool's result ("rejected").
 */
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { tools } from "@byok/cursor-protocol";
import { startedCard, toolOutcome } from "./cards.ts";
import { ArgReader, toModelText, type ToolArgs } from "./tool-args.ts";
import type { SearchHit } from "./web-tools.ts";
import type { CommittedResult, InteractionProgress, InteractionReply, ToolCallInput, ToolOutcome, ToolPlan, ToolPlanContext, ToolVariant } from "./types.ts";

const MAX_TERM_CHARS = 400;

export function planWebSearch(call: ToolCallInput, args: ToolArgs, ctx: ToolPlanContext): ToolPlan {
  const reader = new ArgReader("WebSearch", args);
  const term = reader.requiredString("search_term").trim();
  if (term.length > MAX_TERM_CHARS) reader.problem(`"search_term" must be at most ${MAX_TERM_CHARS} characters`);
  const searchArgs = create(tools.WebSearchArgsSchema, { searchTerm: term, toolCallId: call.callId });
  const started = startedCard(call.callId, searchVariant(searchArgs), ctx);
  const result = (r: MessageInitShape<typeof tools.WebSearchResultSchema>["result"]) => create(tools.WebSearchResultSchema, { result: r });
  const failure = (message: string): ToolOutcome => toolOutcome(call.callId, searchVariant(searchArgs, result({ case: "error", value: { error: message } })), ctx, message, true);
  const hitsOutcome = (hits: readonly SearchHit[]): ToolOutcome => {
    const references = hits.map((h) => create(tools.WebSearchReferenceSchema, { title: h.title, url: h.url, chunk: h.snippet }));
    return toolOutcome(call.callId, searchVariant(searchArgs, result({ case: "success", value: { references } })), ctx, searchText(term, hits), false);
  };
  const error = reader.error();
  if (error !== undefined) return { kind: "invalid", error, started, outcome: failure(error) };
  return {
    kind: "interaction",
    started,
    query: { case: "webSearchRequestQuery", value: create(tools.WebSearchRequestQuerySchema, { args: searchArgs }) },
    onResponse: (reply: InteractionReply): InteractionProgress => {
      if (reply.case !== "webSearchRequestResponse") {
        return { kind: "protocol_error", message: `WebSearch answered with ${reply.case ?? "an empty interaction response"}` };
      }
      const answer = reply.value.result;
      if (answer.case !== "approved") {
        const reason = answer.case === "rejected" ? answer.value.reason.trim() : "";
        const content = `The user declined the web search for ${JSON.stringify(term)}${reason === "" ? "" : `: ${reason}`}.`;
        return { kind: "done", outcome: toolOutcome(call.callId, searchVariant(searchArgs, result({ case: "rejected", value: { reason } })), ctx, content, false) };
      }
      return {
        kind: "work",
        run: async (signal) => {
          const found = await ctx.web.search(term, signal);
          return found.kind === "results" ? hitsOutcome(found.hits) : failure(`The web search failed: ${found.message}`);
        },
      };
    },
    reuse: (committed: CommittedResult): ToolOutcome => {
      const hits = committed.isError ? undefined : hitsOf(committed.content);
      if (hits !== undefined) return hitsOutcome(hits);
      return toolOutcome(call.callId, searchVariant(searchArgs, result({ case: "error", value: { error: committed.content } })), ctx, committed.content, committed.isError);
    },
  };
}

/** The model's view of the hits. */
export function searchText(term: string, hits: readonly SearchHit[]): string {
  return toModelText({ search_term: term, results: hits.map((h) => ({ title: h.title, url: h.url, snippet: h.snippet })) });
}

/** The hits back from a committed result (searchText's format). */
function hitsOf(content: string): SearchHit[] | undefined {
  try {
    const parsed = JSON.parse(content) as { results?: Array<{ title?: unknown; url?: unknown; snippet?: unknown }> };
    if (!Array.isArray(parsed.results)) return undefined;
    return parsed.results.map((r) => ({ title: String(r.title ?? ""), url: String(r.url ?? ""), snippet: String(r.snippet ?? "") }));
  } catch {
    return undefined;
  }
}

function searchVariant(args: tools.WebSearchArgs, result?: tools.WebSearchResult): ToolVariant {
  return { case: "webSearchToolCall", value: create(tools.WebSearchToolCallSchema, { args, ...(result === undefined ? {} : { result }) }) };
}
