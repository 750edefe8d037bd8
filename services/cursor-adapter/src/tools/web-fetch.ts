/**
 * WebFetch: the user approves in Cursor (web_fetch_request_query), then the
 * gateway fetches the page under its egress policy and hands the model the
 * page as Markdown, one chunk at a time: every result names the page's
 * content_id and where the next chunk starts; reading on (content_id +
 * offset) needs no new approval and no new fetch. A rejected approval is the
 * tool's result ("rejected"), not an error of the run.
 */
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { tools } from "@byok/cursor-protocol";
import { startedCard, toolOutcome } from "./cards.ts";
import { ArgReader, type ToolArgs } from "./tool-args.ts";
import type { WebPage } from "./web-tools.ts";
import type { CommittedResult, InteractionProgress, InteractionReply, ToolCallInput, ToolOutcome, ToolPlan, ToolPlanContext, ToolVariant } from "./types.ts";

const MAX_URL_CHARS = 4_096;
const MIN_LIMIT = 500;

export function planWebFetch(call: ToolCallInput, args: ToolArgs, ctx: ToolPlanContext): ToolPlan {
  const reader = new ArgReader("WebFetch", args);
  const rawUrl = reader.optionalString("url")?.trim() ?? "";
  const contentId = reader.optionalString("content_id")?.trim();
  const offset = reader.optionalInteger("offset", { min: 0 }) ?? 0;
  const limit = reader.optionalInteger("limit", { min: MIN_LIMIT, max: Math.max(MIN_LIMIT, ctx.web.chunkChars) }) ?? ctx.web.chunkChars;
  if (rawUrl === "" && contentId === undefined) reader.problem(`"url" is required`);
  const url = rawUrl === "" ? undefined : checkedUrl(rawUrl, reader);
  const fetchArgs = create(tools.WebFetchArgsSchema, { url: rawUrl, toolCallId: call.callId });
  const started = startedCard(call.callId, fetchVariant(fetchArgs), ctx);
  const result = (r: MessageInitShape<typeof tools.WebFetchResultSchema>["result"]) => create(tools.WebFetchResultSchema, { result: r });
  const failure = (message: string): ToolOutcome =>
    toolOutcome(call.callId, fetchVariant(fetchArgs, result({ case: "error", value: { url: rawUrl, error: message } })), ctx, message, true);
  const chunkOutcome = (page: WebPage, from: number): ToolOutcome => {
    const text = chunkText(page, from, limit);
    return toolOutcome(call.callId, fetchVariant(fetchArgs, result({ case: "success", value: { url: page.url, markdown: text } })), ctx, text, false);
  };
  const error = reader.error();
  if (error !== undefined) return { kind: "invalid", error, started, outcome: failure(error) };

  if (contentId !== undefined) {
    // Reading on in a page this conversation fetched: no approval, no network.
    return {
      kind: "server",
      started,
      delayMs: 0,
      complete: async () => {
        const page = await ctx.web.storedPage(ctx.conversationId, contentId);
        if (page === undefined) return failure(`Unknown content_id ${JSON.stringify(contentId)}: it does not name a page fetched in this conversation. Fetch the URL again.`);
        if (offset >= page.markdown.length && page.markdown.length > 0) {
          return failure(`offset ${offset} is past the end of ${page.url} (${page.markdown.length} characters).`);
        }
        return chunkOutcome(page, offset);
      },
    };
  }
  const approvedUrl = url as string;
  return {
    kind: "interaction",
    started,
    query: { case: "webFetchRequestQuery", value: create(tools.WebFetchRequestQuerySchema, { args: create(tools.WebFetchArgsSchema, { url: approvedUrl, toolCallId: call.callId }) }) },
    onResponse: (reply: InteractionReply): InteractionProgress => {
      if (reply.case !== "webFetchRequestResponse") {
        return { kind: "protocol_error", message: `WebFetch answered with ${reply.case ?? "an empty interaction response"}` };
      }
      const answer = reply.value.result;
      if (answer.case !== "approved") {
        const reason = answer.case === "rejected" ? answer.value.reason.trim() : "";
        const content = `The user declined fetching ${approvedUrl}${reason === "" ? "" : `: ${reason}`}. Do not fetch it again unless the user asks.`;
        return { kind: "done", outcome: toolOutcome(call.callId, fetchVariant(fetchArgs, result({ case: "rejected", value: { reason } })), ctx, content, false) };
      }
      return {
        kind: "work",
        run: async (signal) => {
          const fetched = await ctx.web.page(ctx.conversationId, approvedUrl, signal);
          switch (fetched.kind) {
            case "page":
              return chunkOutcome(fetched.page, offset);
            case "refused":
              return failure(`The gateway does not fetch ${approvedUrl}: ${fetched.message}`);
            case "failed":
              return failure(`Fetching ${approvedUrl} failed: ${fetched.message}`);
            default: {
              const unreachable: never = fetched;
              throw new Error(`unknown page outcome ${String(unreachable)}`);
            }
          }
        },
      };
    },
    reuse: (committed: CommittedResult): ToolOutcome => {
      const r = committed.isError
        ? result({ case: "error", value: { url: rawUrl, error: committed.content } })
        : result({ case: "success", value: { url: rawUrl, markdown: committed.content } });
      return toolOutcome(call.callId, fetchVariant(fetchArgs, r), ctx, committed.content, committed.isError);
    },
  };
}

/** http(s) URLs only, without credentials; problems go to the reader. */
function checkedUrl(text: string, reader: ArgReader): string | undefined {
  if (text.length > MAX_URL_CHARS) {
    reader.problem(`"url" is longer than ${MAX_URL_CHARS} characters`);
    return undefined;
  }
  let parsed: URL;
  try {
    parsed = new URL(text);
  } catch {
    reader.problem(`"url" is not a valid URL: ${JSON.stringify(text)} (give an absolute http:// or https:// address)`);
    return undefined;
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    reader.problem(`"url" must be an http:// or https:// address, not ${parsed.protocol}`);
    return undefined;
  }
  if (parsed.username !== "" || parsed.password !== "") {
    reader.problem(`"url" must not carry a user name or password`);
    return undefined;
  }
  parsed.hash = "";
  return parsed.toString();
}

/**
 * One chunk of the page for the model: a header naming the page, its content
 * id and the range, a note how to read on when there is more, then the text.
 * A chunk ends at a line break near its end when there is one.
 */
export function chunkText(page: WebPage, offset: number, limit: number): string {
  const total = page.markdown.length;
  const start = Math.min(offset, total);
  let end = Math.min(total, start + limit);
  if (end < total) {
    const newline = page.markdown.lastIndexOf("\n", end);
    if (newline > start + Math.floor(limit * 0.8)) end = newline + 1;
    // Never split a surrogate pair.
    const code = page.markdown.charCodeAt(end - 1);
    if (code >= 0xd800 && code <= 0xdbff) end -= 1;
  }
  const lines = [`URL: ${page.url}`];
  if (page.title !== "") lines.push(`Title: ${page.title}`);
  lines.push(`Content id: ${page.contentId} (characters ${start}-${end} of ${total})`);
  if (end < total) lines.push(`More follows: call WebFetch with content_id "${page.contentId}" and offset ${end} to read on.`);
  const body = total === 0 ? "(The page has no text content.)" : page.markdown.slice(start, end);
  return `${lines.join("\n")}\n\n${body}`;
}

function fetchVariant(args: tools.WebFetchArgs, result?: tools.WebFetchResult): ToolVariant {
  return { case: "webFetchToolCall", value: create(tools.WebFetchToolCallSchema, { args, ...(result === undefined ? {} : { result }) }) };
}
