/**
 * What the web tools (WebFetch, WebSearch) need from the gateway: fetching a
 * page under the egress policy (or taking it from the conversation's cache),
 * reading a page fetched earlier by its content id, and searching through the
 * configured backend. The implementation lives in ../web/; tests pass fakes.
 * Every method resolves to an outcome value; none throws for an expected
 * failure (refused address, timeout, oversized page, backend down).
 */

export interface WebPage {
  /** Names this page for later reads (WebFetch content_id). */
  contentId: string;
  /** The address the page came from (after redirects). */
  url: string;
  title: string;
  markdown: string;
}

export type PageOutcome =
  | { kind: "page"; page: WebPage; fromCache: boolean }
  /** The egress policy refused the address (denied host, private network, scheme, ...). */
  | { kind: "refused"; message: string }
  /** The fetch failed (HTTP error, timeout, too large, unreadable content). */
  | { kind: "failed"; message: string };

export interface SearchHit {
  title: string;
  url: string;
  snippet: string;
}

export type SearchOutcome = { kind: "results"; hits: SearchHit[] } | { kind: "failed"; message: string };

export interface WebTools {
  /** WebFetch can run (it is offered to the model). */
  readonly fetchEnabled: boolean;
  /** A search backend is configured (WebSearch is offered). */
  readonly searchEnabled: boolean;
  /** Default characters per WebFetch result. */
  readonly chunkChars: number;
  page(conversationId: string, url: string, signal: AbortSignal): Promise<PageOutcome>;
  /** A page this conversation fetched before; undefined when the id is unknown to it. */
  storedPage(conversationId: string, contentId: string): Promise<WebPage | undefined>;
  search(term: string, signal: AbortSignal): Promise<SearchOutcome>;
}

/** For runs without web access: nothing is offered, every call fails. */
export const NO_WEB_TOOLS: WebTools = {
  fetchEnabled: false,
  searchEnabled: false,
  chunkChars: 16_384,
  page: () => Promise.resolve({ kind: "refused", message: "web access is not configured on this gateway" }),
  storedPage: () => Promise.resolve(undefined),
  search: () => Promise.resolve({ kind: "failed", message: "no search backend is configured on this gateway" }),
};
