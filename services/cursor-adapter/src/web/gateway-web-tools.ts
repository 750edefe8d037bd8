/**
 * The gateway's WebTools: WebFetch under the egress policy (safe-fetch.ts),
 * page conversion in the worker pool (page-conversion.ts), pages kept per
 * conversation (page-store.ts), WebSearch through the configured backend
 * (searxng.ts). Logs say which host was fetched and how it went, never the
 * page content or the search term (unless the debug-content switch is on).
 */
import { performance } from "node:perf_hooks";
import { contentForLog, type Logger, type WebConfig } from "@byok/platform";
import type { StoreClient } from "@byok/store-client";
import type { PageOutcome, SearchOutcome, WebPage, WebTools } from "../tools/web-tools.ts";
import { EgressPolicy } from "./egress-policy.ts";
import type { PageConverter } from "./page-conversion.ts";
import { PageStore } from "./page-store.ts";
import { safeFetch, type Resolve } from "./safe-fetch.ts";
import { searchSearxng, type FetchLike } from "./searxng.ts";

export const WEB_FETCH_USER_AGENT = "byok-gateway-webfetch/1 (+https://github.com/; fetched on behalf of an agent)";

export interface GatewayWebToolsDeps {
  store: Pick<StoreClient, "putBlob" | "getBlobs">;
  converter: PageConverter;
  log: Logger;
  /** DNS for fetches (tests resolve names themselves). */
  resolve?: Resolve;
  /** HTTP client of the search backend (tests pass their own). */
  searchFetch?: FetchLike;
  now?: () => number;
}

const HTML_TYPES = new Set(["text/html", "application/xhtml+xml"]);

function isTextType(mediaType: string): boolean {
  return mediaType === "" || mediaType.startsWith("text/") || mediaType === "application/json" || mediaType.endsWith("+json") || mediaType.endsWith("+xml") || mediaType === "application/xml";
}

export function createGatewayWebTools(config: WebConfig, deps: GatewayWebToolsDeps): WebTools {
  const fetchConfig = config.fetch;
  const policy = new EgressPolicy(fetchConfig);
  const pages = new PageStore({ store: deps.store, ttlMs: fetchConfig.cacheTtlMs, now: deps.now ?? Date.now, log: deps.log });
  const search = config.search;
  const log = deps.log;

  async function page(conversationId: string, url: string, signal: AbortSignal): Promise<PageOutcome> {
    const cached = pages.cached(conversationId, url);
    if (cached !== undefined) return { kind: "page", page: cached, fromCache: true };
    const started = performance.now();
    const host = hostForLog(url);
    const fetched = await safeFetch(
      url,
      {
        policy,
        maxBytes: fetchConfig.maxBytes,
        timeoutMs: fetchConfig.timeoutMs,
        maxRedirects: fetchConfig.maxRedirects,
        userAgent: WEB_FETCH_USER_AGENT,
        ...(deps.resolve === undefined ? {} : { resolve: deps.resolve }),
      },
      signal,
    );
    if (fetched.kind !== "ok") {
      log.info({ host, outcome: fetched.kind, reason: fetched.message, ms: Math.round(performance.now() - started) }, "web fetch not done");
      return fetched;
    }
    const { response } = fetched;
    const html = HTML_TYPES.has(response.mediaType);
    if (!html && !isTextType(response.mediaType)) {
      log.info({ host, media_type: response.mediaType }, "web fetch returned no text");
      return { kind: "failed", message: `the page is ${response.mediaType}, not text or HTML` };
    }
    let converted;
    try {
      converted = await deps.converter.convert({ kind: html ? "html" : "text", text: decodeText(response.body, response.charset), url: response.url, mediaType: response.mediaType }, signal);
    } catch (error) {
      if (signal.aborted) return { kind: "failed", message: "the fetch was cancelled" };
      log.warn({ err: error, host }, "page conversion failed");
      return { kind: "failed", message: "the page could not be converted to text" };
    }
    const saved: WebPage = await pages.save(conversationId, url, { url: response.url, title: converted.title, markdown: converted.markdown });
    log.info(
      { host, status: response.status, bytes: response.body.length, chars: saved.markdown.length, ms: Math.round(performance.now() - started), url: contentForLog(url) },
      "web page fetched",
    );
    return { kind: "page", page: saved, fromCache: false };
  }

  return {
    fetchEnabled: fetchConfig.enabled,
    searchEnabled: search !== undefined,
    chunkChars: fetchConfig.chunkChars,
    page,
    storedPage: (conversationId, contentId) => pages.load(conversationId, contentId),
    async search(term: string, signal: AbortSignal): Promise<SearchOutcome> {
      if (search === undefined) return { kind: "failed", message: "no search backend is configured on this gateway" };
      const found = await searchSearxng(search, term, signal, deps.searchFetch);
      log.info({ outcome: found.kind, ...(found.kind === "results" ? { hits: found.hits.length } : { reason: found.message }), search_term: contentForLog(term) }, "web search");
      return found;
    },
  };
}

function hostForLog(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return "(invalid)";
  }
}

function decodeText(body: Buffer, charset: string): string {
  try {
    return new TextDecoder(charset === "" ? "utf-8" : charset).decode(body);
  } catch {
    return new TextDecoder("utf-8").decode(body);
  }
}
