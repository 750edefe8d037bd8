/**
 * WebSearch through a SearXNG-compatible JSON endpoint (the `web.search`
 * configuration): GET <url>?q=<term>&format=json plus the configured extra
 * parameters; the answer's `results` (title, url, content) become the hits,
 * duplicates by URL removed, at most `maxResults`. The backend is the
 * operator's own service, so the fetch egress policy does not apply to it.
 */
import type { WebSearchConfig } from "@byok/platform";
import type { SearchOutcome } from "../tools/web-tools.ts";

const MAX_RESPONSE_BYTES = 2 * 1024 * 1024;
const MAX_SNIPPET_CHARS = 600;

export type FetchLike = (url: string, init: { signal: AbortSignal; headers: Record<string, string> }) => Promise<Response>;

export async function searchSearxng(config: WebSearchConfig, term: string, signal: AbortSignal, fetchImpl: FetchLike = fetch): Promise<SearchOutcome> {
  const url = new URL(config.url);
  for (const [key, value] of Object.entries(config.params)) url.searchParams.set(key, value);
  url.searchParams.set("q", term);
  url.searchParams.set("format", "json");
  const deadline = AbortSignal.timeout(config.timeoutMs);
  let response: Response;
  try {
    response = await fetchImpl(url.toString(), { signal: AbortSignal.any([signal, deadline]), headers: { accept: "application/json" } });
  } catch (error) {
    if (deadline.aborted) return { kind: "failed", message: `the search backend did not answer within ${config.timeoutMs} ms` };
    return { kind: "failed", message: `the search backend cannot be reached (${(error as Error).message})` };
  }
  if (!response.ok) return { kind: "failed", message: `the search backend answered HTTP ${response.status}` };
  const text = await response.text();
  if (text.length > MAX_RESPONSE_BYTES) return { kind: "failed", message: "the search backend's answer is too large" };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { kind: "failed", message: "the search backend's answer is not JSON (is format=json enabled in its settings?)" };
  }
  const results = (parsed as { results?: unknown }).results;
  if (!Array.isArray(results)) return { kind: "failed", message: "the search backend's answer has no results list" };
  const seen = new Set<string>();
  const hits = [];
  for (const raw of results) {
    if (typeof raw !== "object" || raw === null) continue;
    const r = raw as Record<string, unknown>;
    const link = typeof r["url"] === "string" ? r["url"] : "";
    if (link === "" || seen.has(link)) continue;
    seen.add(link);
    const snippet = typeof r["content"] === "string" ? r["content"].replace(/\s+/g, " ").trim() : "";
    hits.push({ title: typeof r["title"] === "string" ? r["title"].trim() : link, url: link, snippet: snippet.length > MAX_SNIPPET_CHARS ? `${snippet.slice(0, MAX_SNIPPET_CHARS)}...` : snippet });
    if (hits.length >= config.maxResults) break;
  }
  return { kind: "results", hits };
}
