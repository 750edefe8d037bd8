/**
 * Getting the bytes of blobs the client referenced (history roots, images):
 * first what the client pushed with the run request (pre_fetched_blobs), then
 * the store (one blob.get), then the client itself over KV GET, at most
 * KV_GETS_IN_FLIGHT at a time (a long history the store lacks is thousands of
 * GETs: pipelined, without handing the client all of them at once, whose
 * deadlines would then run while they wait in its queue). Blobs the store
 * lacked are saved in as few blob.put_many requests as fit (for the run's
 * conversation) so the next turn finds them there; that save runs while the
 * caller reads and imports the history (`saved`). Every byte string is
 * checked against its SHA-256 id.
 */
import pLimit from "p-limit";
import type { agent } from "@byok/cursor-protocol";
import type { Logger } from "@byok/platform";
import type { StoreClient } from "@byok/store-client";
import { blobKey, blobMatches } from "./blob-id.ts";
import type { KvChannel } from "./kv-channel.ts";

export interface BlobSources {
  /** The run's conversation: the store records that it uses the blobs saved here (retention). */
  conversationId: string;
  prefetched: ReadonlyMap<string, Uint8Array>;
  store: Pick<StoreClient, "getBlobs" | "putBlobs">;
  kv: KvChannel;
  log: Logger;
}

/** KV GETs one run has outstanding at the client at once. */
const KV_GETS_IN_FLIGHT = 64;

/** Pre-fetched blobs by hex id; entries whose bytes do not match their id are dropped. */
export function prefetchedBlobs(blobs: readonly agent.PreFetchedBlob[], log: Logger): Map<string, Uint8Array> {
  const byKey = new Map<string, Uint8Array>();
  for (const blob of blobs) {
    if (!blobMatches(blob.id, blob.value)) {
      log.warn({ blob_id: blobKey(blob.id) }, "pre-fetched blob does not match its id; ignored");
      continue;
    }
    byKey.set(blobKey(blob.id), blob.value);
  }
  return byKey;
}

export interface FetchedBlobs {
  /** Hex id -> bytes. */
  blobs: Map<string, Uint8Array>;
  /** The store has the blobs that came from the client (rejects when it could not take them). */
  saved: Promise<void>;
}

/** `onClientBlob`: told each blob a KV GET brought, by hex id, as it arrives (the others are still in flight). */
export async function fetchBlobs(ids: readonly Uint8Array[], sources: BlobSources, onClientBlob?: (key: string, bytes: Uint8Array) => void): Promise<FetchedBlobs> {
  const found = new Map<string, Uint8Array>();
  const wanted = new Map<string, Uint8Array>();
  for (const id of ids) wanted.set(blobKey(id), id);

  const fromClient: Uint8Array[] = [];
  for (const key of wanted.keys()) {
    const bytes = sources.prefetched.get(key);
    if (bytes !== undefined) {
      found.set(key, bytes);
      fromClient.push(bytes);
    }
  }

  const missing = [...wanted].filter(([key]) => !found.has(key)).map(([, id]) => id);
  const stored = await sources.store.getBlobs(missing);
  for (const id of missing) {
    const key = blobKey(id);
    const bytes = stored.get(key);
    if (bytes !== undefined && blobMatches(id, bytes)) found.set(key, bytes);
  }

  const askClient = missing.filter((id) => !found.has(blobKey(id)));
  if (askClient.length > 0) sources.log.debug({ blobs: askClient.length }, "asking the client for blobs");
  const limit = pLimit(KV_GETS_IN_FLIGHT);
  const fetched = await Promise.all(
    askClient.map((id) =>
      limit(async () => {
        const bytes = await sources.kv.get(id);
        onClientBlob?.(blobKey(id), bytes);
        return bytes;
      }),
    ),
  );
  askClient.forEach((id, i) => {
    const bytes = fetched[i]!;
    found.set(blobKey(id), bytes);
    fromClient.push(bytes);
  });

  // Pre-fetched blobs were not looked up in the store; it is content-addressed,
  // so saving one it already has is harmless.
  const saved = sources.store.putBlobs(fromClient, sources.conversationId);
  // Awaited by the caller; until then a failure must not count as unhandled.
  saved.catch(() => undefined);
  return { blobs: found, saved };
}
