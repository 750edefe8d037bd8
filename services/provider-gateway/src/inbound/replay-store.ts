/**
 * Replay state a client of another shape cannot carry (Anthropic thinking
 * signatures, Responses encrypted reasoning items, chat reasoning_content),
 * kept on the gateway for the conversation's next call.
 *
 * How a conversation is recognised: by its own assistant turns. When a
 * translated call completes with opaque replay state, the gateway keeps the
 * whole assistant message as the route produced it (parts in block order plus
 * the replay state) under a key made of the member, the route and a digest of
 * the turn's visible content: its text (all text parts joined, trimmed) and
 * its tool calls (id, name, arguments as canonical JSON). Every client sends
 * that visible content back in the next request of the conversation, whatever
 * its format, so the next call looks each assistant turn of the history up by
 * the same key and, on a hit, sends the kept message instead: the route gets
 * its replay state back byte for byte. No session header or id is needed;
 * tool call ids (unique per provider call) make the keys of tool turns
 * unambiguous, and two identical text answers of one member on one route
 * share one entry (either replay is valid for that text).
 *
 * Storage: a NATS KV bucket (busNames().inboundReplayBucket, entries expire
 * after INBOUND_REPLAY_TTL_MS), so every gateway replica sees what another
 * one kept, with a local cache in front (entries never change: a key names
 * one content). The answer's last event reaches the client only after the
 * entry is stored, so an immediate next request finds it on any replica.
 */
import { createHash } from "node:crypto";
import { fromBinary, toBinary } from "@bufbuild/protobuf";
import { AssistantMessageSchema, type AssistantMessage } from "@byok/contracts";
import type { Logger, NatsConnection } from "@byok/platform";
import { Kvm, type KV } from "@nats-io/kv";

export interface ReplayStore {
  get(key: string): Promise<AssistantMessage | undefined>;
  put(key: string, message: AssistantMessage): Promise<void>;
}

/** The key of an assistant turn, or undefined when it shows nothing a client could send back. */
export function replayKey(memberId: string, routeId: string, message: AssistantMessage): string | undefined {
  const texts: string[] = [];
  const calls: Array<[string, string, string]> = [];
  for (const part of message.content) {
    if (part.part.case === "text") texts.push(part.part.value.text);
    else if (part.part.case === "toolCall") calls.push([part.part.value.callId, part.part.value.name, canonicalJson(part.part.value.argumentsJson)]);
  }
  const text = texts.join("").trim();
  if (text === "" && calls.length === 0) return undefined;
  const digest = createHash("sha256").update(JSON.stringify([memberId, routeId, text, calls])).digest("hex");
  return `turn.${digest}`;
}

function canonicalJson(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text));
  } catch {
    return text;
  }
}

/** Bounded local cache (by encoded size); `undefined` values remember misses. */
class LocalCache {
  readonly #entries = new Map<string, { message: AssistantMessage | undefined; size: number }>();
  #bytes = 0;
  readonly #maxBytes: number;

  constructor(maxBytes: number) {
    this.#maxBytes = maxBytes;
  }

  has(key: string): boolean {
    return this.#entries.has(key);
  }

  get(key: string): AssistantMessage | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    this.#entries.delete(key);
    this.#entries.set(key, entry);
    return entry.message;
  }

  set(key: string, message: AssistantMessage | undefined, size: number): void {
    const old = this.#entries.get(key);
    if (old !== undefined) {
      this.#bytes -= old.size;
      this.#entries.delete(key);
    }
    this.#entries.set(key, { message, size: size + key.length });
    this.#bytes += size + key.length;
    for (const [oldest, entry] of this.#entries) {
      if (this.#bytes <= this.#maxBytes) break;
      this.#entries.delete(oldest);
      this.#bytes -= entry.size;
    }
  }
}

const LOCAL_CACHE_BYTES = 64 * 1024 * 1024;

/** The KV bucket (created when missing) behind a local cache. */
export async function natsReplayStore(nc: NatsConnection, bucket: string, ttlMs: number, log: Logger): Promise<ReplayStore> {
  const kv: KV = await new Kvm(nc).create(bucket, { ttl: ttlMs, history: 1 });
  const cache = new LocalCache(LOCAL_CACHE_BYTES);
  return {
    async get(key) {
      if (cache.has(key)) return cache.get(key);
      let message: AssistantMessage | undefined;
      try {
        const entry = await kv.get(key);
        message = entry === null || entry.operation !== "PUT" || entry.value.length === 0 ? undefined : fromBinary(AssistantMessageSchema, entry.value);
        cache.set(key, message, entry?.value.length ?? 0);
      } catch (error) {
        log.warn({ err: error }, "replay state lookup failed; the turn is sent without it");
        return undefined;
      }
      return message;
    },
    async put(key, message) {
      const bytes = toBinary(AssistantMessageSchema, message);
      cache.set(key, message, bytes.length);
      try {
        await kv.put(key, bytes);
      } catch (error) {
        log.warn({ err: error }, "replay state could not be kept; another replica will not find it");
      }
    },
  };
}

/** In memory only (one process): for tests and tools. */
export function memoryReplayStore(): ReplayStore {
  const entries = new Map<string, AssistantMessage>();
  return {
    get: (key) => Promise.resolve(entries.get(key)),
    put: (key, message) => {
      entries.set(key, message);
      return Promise.resolve();
    },
  };
}
