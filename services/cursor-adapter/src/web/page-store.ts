/**
 * Pages WebFetch fetched, per conversation: the page is kept as a blob in the
 * store (content-addressed; its id, base64url, is the content_id the model
 * reads on with), wrapped with the conversation id so a content id only opens
 * pages of the conversation that fetched them. A small in-memory cache serves
 * repeated fetches of the same URL within `ttlMs` without the network, and
 * later chunks without a store round trip.
 */
import { createHash } from "node:crypto";
import type { StoreClient } from "@byok/store-client";
import type { Logger } from "@byok/platform";
import type { WebPage } from "../tools/web-tools.ts";

const CONTENT_ID_PREFIX = "wp_";
const PAGE_KIND = "byok.web-page.v1";
const MAX_ENTRIES = 256;

interface StoredPageJson {
  kind: string;
  conversation_id: string;
  url: string;
  title: string;
  markdown: string;
}

interface CacheEntry {
  readonly conversationId: string;
  readonly page: WebPage;
  readonly expiresAt: number;
}

export interface PageStoreDeps {
  store: Pick<StoreClient, "putBlob" | "getBlobs">;
  ttlMs: number;
  now(): number;
  log: Logger;
}

export class PageStore {
  readonly #deps: PageStoreDeps;
  /** Insertion order = age: the oldest entry goes first when the cache is full. */
  readonly #byUrl = new Map<string, CacheEntry>();
  readonly #byContentId = new Map<string, CacheEntry>();

  constructor(deps: PageStoreDeps) {
    this.#deps = deps;
  }

  /** The page this conversation fetched from `url` less than ttlMs ago. */
  cached(conversationId: string, url: string): WebPage | undefined {
    const entry = this.#byUrl.get(urlKey(conversationId, url));
    if (entry === undefined || entry.expiresAt <= this.#deps.now()) return undefined;
    return entry.page;
  }

  /** Keeps a fetched page (store + cache); its content id. A store that fails only costs durability. */
  async save(conversationId: string, requestedUrl: string, fetched: Omit<WebPage, "contentId">): Promise<WebPage> {
    const json: StoredPageJson = { kind: PAGE_KIND, conversation_id: conversationId, url: fetched.url, title: fetched.title, markdown: fetched.markdown };
    const bytes = new TextEncoder().encode(JSON.stringify(json));
    const contentId = `${CONTENT_ID_PREFIX}${createHash("sha256").update(bytes).digest("base64url")}`;
    try {
      await this.#deps.store.putBlob(bytes);
    } catch (error) {
      this.#deps.log.warn({ err: error }, "fetched page not saved in the store; later reads rely on the cache");
    }
    const page: WebPage = { contentId, ...fetched };
    const entry: CacheEntry = { conversationId, page, expiresAt: this.#deps.now() + this.#deps.ttlMs };
    this.#remember(urlKey(conversationId, requestedUrl), entry);
    return page;
  }

  /** A page of this conversation by content id; undefined for another conversation's or an unknown id. */
  async load(conversationId: string, contentId: string): Promise<WebPage | undefined> {
    const cached = this.#byContentId.get(contentId);
    if (cached !== undefined) return cached.conversationId === conversationId ? cached.page : undefined;
    if (!contentId.startsWith(CONTENT_ID_PREFIX)) return undefined;
    const id = Buffer.from(contentId.slice(CONTENT_ID_PREFIX.length), "base64url");
    if (id.length !== 32) return undefined;
    const blobs = await this.#deps.store.getBlobs([id]);
    const bytes = blobs.get(id.toString("hex"));
    if (bytes === undefined) return undefined;
    let json: Partial<StoredPageJson>;
    try {
      json = JSON.parse(new TextDecoder().decode(bytes)) as Partial<StoredPageJson>;
    } catch {
      return undefined;
    }
    if (json.kind !== PAGE_KIND || json.conversation_id !== conversationId || typeof json.markdown !== "string") return undefined;
    return { contentId, url: String(json.url ?? ""), title: String(json.title ?? ""), markdown: json.markdown };
  }

  #remember(key: string, entry: CacheEntry): void {
    this.#byUrl.delete(key);
    this.#byUrl.set(key, entry);
    this.#byContentId.delete(entry.page.contentId);
    this.#byContentId.set(entry.page.contentId, entry);
    for (const map of [this.#byUrl, this.#byContentId] as const) {
      while (map.size > MAX_ENTRIES) {
        const oldest = map.keys().next().value;
        if (oldest === undefined) break;
        map.delete(oldest);
      }
    }
  }
}

function urlKey(conversationId: string, url: string): string {
  return `${conversationId}\n${url}`;
}
