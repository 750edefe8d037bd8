/**
 * An HTTP GET that keeps to the egress policy on every hop:
 *
 * 1. the URL is checked (scheme, host patterns, IP literal);
 * 2. the host name is resolved and every address it resolves to is checked;
 * 3. the connection goes to the address that was checked (the socket is opened
 *    to that IP, with the host name only as Host header and TLS server name),
 *    so a second, different DNS answer cannot redirect it (DNS rebinding);
 * 4. a redirect is followed only by starting again at 1 with the new URL,
 *    at most `maxRedirects` times.
 *
 * The whole fetch (all hops) is bounded by `timeoutMs`; the body by `maxBytes`
 * after decompression (a declared Content-Length above it is refused before
 * reading). Outcomes are values: refused (policy) or failed (network, HTTP
 * status, limits), never thrown.
 */
import { lookup as dnsLookup } from "node:dns/promises";
import http, { type IncomingMessage } from "node:http";
import https from "node:https";
import { isIP } from "node:net";
import { createBrotliDecompress, createGunzip, createInflate } from "node:zlib";
import type { Readable } from "node:stream";
import { EgressPolicy, hostOf } from "./egress-policy.ts";

/** Resolves a host name to all its addresses (tests pass their own). */
export type Resolve = (hostname: string) => Promise<Array<{ address: string; family: number }>>;

export const systemResolve: Resolve = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

export interface SafeFetchOptions {
  policy: EgressPolicy;
  maxBytes: number;
  timeoutMs: number;
  maxRedirects: number;
  userAgent: string;
  resolve?: Resolve;
}

export interface FetchedBody {
  /** The URL the body came from (after redirects). */
  url: string;
  status: number;
  /** Lower-case media type without parameters ("" when the server sent none). */
  mediaType: string;
  /** The charset parameter of Content-Type ("" when none). */
  charset: string;
  body: Buffer;
}

export type SafeFetchOutcome =
  | { kind: "ok"; response: FetchedBody }
  | { kind: "refused"; message: string }
  | { kind: "failed"; message: string };

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

class FetchStop extends Error {
  override readonly name = "FetchStop";
  readonly outcome: Exclude<SafeFetchOutcome, { kind: "ok" }>;
  constructor(outcome: Exclude<SafeFetchOutcome, { kind: "ok" }>) {
    super(outcome.message);
    this.outcome = outcome;
  }
}

export async function safeFetch(url: string, options: SafeFetchOptions, signal: AbortSignal): Promise<SafeFetchOutcome> {
  const deadline = AbortSignal.timeout(options.timeoutMs);
  const combined = AbortSignal.any([signal, deadline]);
  let current: URL;
  try {
    current = new URL(url);
  } catch {
    return { kind: "refused", message: `${JSON.stringify(url)} is not a valid URL` };
  }
  try {
    for (let hop = 0; ; hop++) {
      const address = await checkedAddress(current, options);
      const response = await request(current, address, options, combined);
      const location = response.headers.location;
      if (REDIRECTS.has(response.statusCode ?? 0) && location !== undefined) {
        response.resume();
        if (hop >= options.maxRedirects) throw new FetchStop({ kind: "failed", message: `more than ${options.maxRedirects} redirects` });
        try {
          current = new URL(location, current);
        } catch {
          throw new FetchStop({ kind: "failed", message: `redirect to an invalid address ${JSON.stringify(location)}` });
        }
        continue;
      }
      return { kind: "ok", response: await readBody(current, response, options, combined) };
    }
  } catch (error) {
    if (error instanceof FetchStop) return error.outcome;
    if (deadline.aborted) return { kind: "failed", message: `no complete answer within ${options.timeoutMs} ms` };
    if (signal.aborted) return { kind: "failed", message: "the fetch was cancelled" };
    return { kind: "failed", message: networkMessage(error) };
  }
}

/** Checks the URL and the addresses of its host; the one to connect to. */
async function checkedAddress(url: URL, options: SafeFetchOptions): Promise<string> {
  const verdict = options.policy.checkUrl(url);
  if (verdict.kind === "refused") throw new FetchStop({ kind: "refused", message: verdict.message });
  const host = hostOf(url);
  if (isIP(host) !== 0) return host;
  let addresses: Array<{ address: string; family: number }>;
  try {
    addresses = await (options.resolve ?? systemResolve)(host);
  } catch (error) {
    throw new FetchStop({ kind: "failed", message: `the host ${host} could not be resolved (${networkMessage(error)})` });
  }
  if (addresses.length === 0) throw new FetchStop({ kind: "failed", message: `the host ${host} has no address` });
  for (const { address } of addresses) {
    const checked = options.policy.checkAddress(address);
    if (checked.kind === "refused") throw new FetchStop({ kind: "refused", message: `${host} resolves to an address the gateway does not connect to (${checked.message})` });
  }
  return (addresses[0] as { address: string }).address;
}

function request(url: URL, address: string, options: SafeFetchOptions, signal: AbortSignal): Promise<IncomingMessage> {
  const secure = url.protocol === "https:";
  const host = hostOf(url);
  return new Promise((resolve, reject) => {
    const req = (secure ? https : http).request(
      {
        // The socket goes to the checked address; the name is only for Host and TLS.
        host: address,
        port: url.port === "" ? (secure ? 443 : 80) : Number(url.port),
        path: `${url.pathname}${url.search}`,
        method: "GET",
        agent: false,
        signal,
        headers: {
          host: url.host,
          "user-agent": options.userAgent,
          accept: "text/html,application/xhtml+xml,text/plain;q=0.9,text/markdown;q=0.9,application/json;q=0.8,*/*;q=0.5",
          "accept-encoding": "gzip, deflate, br",
        },
        ...(secure && isIP(host) === 0 ? { servername: host } : {}),
      },
      resolve,
    );
    req.on("error", reject);
    req.end();
  });
}

async function readBody(url: URL, response: IncomingMessage, options: SafeFetchOptions, signal: AbortSignal): Promise<FetchedBody> {
  const status = response.statusCode ?? 0;
  if (status < 200 || status >= 300) {
    response.resume();
    throw new FetchStop({ kind: "failed", message: `the server answered HTTP ${status}${response.statusMessage ? ` ${response.statusMessage}` : ""}` });
  }
  const declared = Number(response.headers["content-length"] ?? NaN);
  if (Number.isFinite(declared) && declared > options.maxBytes) {
    response.destroy();
    throw new FetchStop({ kind: "failed", message: tooLarge(options.maxBytes) });
  }
  const stream = decoded(response);
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of stream) {
      size += (chunk as Buffer).length;
      if (size > options.maxBytes) throw new FetchStop({ kind: "failed", message: tooLarge(options.maxBytes) });
      chunks.push(chunk as Buffer);
      if (signal.aborted) throw signal.reason;
    }
  } finally {
    if (size > options.maxBytes || signal.aborted) {
      response.destroy();
      stream.destroy();
    }
  }
  const [mediaType = "", ...params] = (response.headers["content-type"] ?? "").split(";").map((p) => p.trim());
  const charset = params.find((p) => p.toLowerCase().startsWith("charset="))?.slice("charset=".length).replace(/"/g, "") ?? "";
  return { url: url.toString(), status, mediaType: mediaType.toLowerCase(), charset: charset.toLowerCase(), body: Buffer.concat(chunks) };
}

function decoded(response: IncomingMessage): Readable {
  switch ((response.headers["content-encoding"] ?? "").trim().toLowerCase()) {
    case "gzip":
    case "x-gzip":
      return response.pipe(createGunzip());
    case "deflate":
      return response.pipe(createInflate());
    case "br":
      return response.pipe(createBrotliDecompress());
    default:
      return response;
  }
}

function tooLarge(maxBytes: number): string {
  return `the page is larger than the gateway's limit of ${maxBytes} bytes`;
}

function networkMessage(error: unknown): string {
  const code = (error as { code?: unknown }).code;
  const message = error instanceof Error ? error.message : String(error);
  return typeof code === "string" && !message.includes(code) ? `${code}: ${message}` : message;
}
