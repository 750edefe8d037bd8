/**
 * The `web` section of the gateway configuration: what the gateway may fetch
 * for WebFetch (an egress policy) and which search backend serves WebSearch.
 * Both run on the gateway (cursor adapter) after the member approved the call
 * in Cursor, so the policy protects the gateway's own network.
 *
 * Host patterns: "*" (any host), "example.com" (that host only) or
 * "*.example.com" (its subdomains, not the apex). A host matching a deny
 * pattern is refused even when an allow pattern matches too. Independently of
 * host names, every address a host resolves to (and every redirect target) is
 * checked: special-purpose networks (private, loopback, link-local, CGNAT,
 * multicast, ...) are refused unless `allowNetworks` lists them.
 */
import { isIP } from "node:net";
import { z } from "zod";

/** "*", "example.com" or "*.example.com" (lower-case letters, digits, dashes). */
const hostPatternSchema = z
  .string()
  .transform((s) => s.trim().toLowerCase().replace(/\.$/, ""))
  .pipe(z.string().regex(/^(\*|(\*\.)?[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*)$/, 'expected "*", "host.name" or "*.host.name"'));

/** An IPv4 or IPv6 network in CIDR notation, e.g. "127.0.0.0/8" or "fd00::/8". */
const cidrSchema = z.string().refine((text) => {
  const [address, bits, rest] = text.split("/");
  if (address === undefined || bits === undefined || rest !== undefined || !/^\d{1,3}$/.test(bits)) return false;
  const family = isIP(address);
  return family !== 0 && Number(bits) <= (family === 4 ? 32 : 128);
}, "expected a network in CIDR notation (address/prefix length)");

export const webFetchConfigSchema = z.object({
  /** false: WebFetch is not offered. */
  enabled: z.boolean().default(true),
  allowHosts: z.array(hostPatternSchema).default(["*"]),
  denyHosts: z.array(hostPatternSchema).default([]),
  /** Special-purpose networks that may be reached anyway (default none: private, loopback, link-local, ... are refused). */
  allowNetworks: z.array(cidrSchema).default([]),
  /** Largest response body accepted, after decompression. */
  maxBytes: z.number().int().positive().default(5 * 1024 * 1024),
  /** Bound on one fetch (all redirects included). */
  timeoutMs: z.number().int().positive().default(15_000),
  maxRedirects: z.number().int().min(0).max(20).default(5),
  /** Characters of page text per WebFetch result; the model reads on with content_id + offset. */
  chunkChars: z.number().int().min(1_000).max(100_000).default(16_384),
  /** How long a fetched page is reused within its conversation before it is fetched again. */
  cacheTtlMs: z.number().int().min(0).default(15 * 60_000),
});

const searxngSearchSchema = z.object({
  kind: z.literal("searxng"),
  /** The search endpoint, e.g. "http://searxng:8080/search" (asked with q=...&format=json). */
  url: z.string().url(),
  maxResults: z.number().int().min(1).max(20).default(8),
  timeoutMs: z.number().int().positive().default(10_000),
  /** Extra query parameters (e.g. {"language": "en", "safesearch": "1"}). */
  params: z.record(z.string(), z.string()).default({}),
});

export const webSearchConfigSchema = z.discriminatedUnion("kind", [searxngSearchSchema]);

export const webConfigSchema = z.object({
  fetch: webFetchConfigSchema.prefault({}),
  /** Unset: WebSearch is not offered. */
  search: webSearchConfigSchema.optional(),
});

export type WebConfig = z.infer<typeof webConfigSchema>;
export type WebFetchConfig = z.infer<typeof webFetchConfigSchema>;
export type WebSearchConfig = z.infer<typeof webSearchConfigSchema>;
