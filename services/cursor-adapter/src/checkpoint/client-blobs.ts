/**
 * What the client holds, as far as this run knows: blobs it sent us (its roots,
 * pre-fetched blobs, GET answers) and blobs we SET. A checkpoint may reference a
 * blob only once it is held or its SET was acknowledged (the ACK barrier).
 */
import { blobIdOf, blobKey } from "./blob-id.ts";
import { HeldIds } from "./held-ids.ts";
import type { KvChannel } from "./kv-channel.ts";

export class BlobNotSyncedError extends Error {
  override readonly name = "BlobNotSyncedError";
}

export class ClientBlobs {
  readonly #kv: KvChannel;
  /** What the client sent us or held before this run (acknowledged by definition). */
  readonly #held = new HeldIds();
  /** key -> the SET acknowledgement of a blob this run sent. */
  readonly #sent = new Map<string, Promise<void>>();
  readonly #acked = new Set<string>();
  /** Until it resolves, SETs wait for it; undefined from then on. */
  #opened: Promise<void> | undefined;

  /**
   * SETs go out as they are put, or with `opened` once it resolves, in the
   * order they were put; until then they wait, and so do their ACKs.
   */
  constructor(kv: KvChannel, opened?: Promise<void>) {
    this.#kv = kv;
    this.#opened = opened;
    void opened?.then(() => {
      this.#opened = undefined;
    });
  }

  markHeld(id: Uint8Array): void {
    this.#held.add(id);
  }

  /** SET `bytes` unless the client already holds or was sent it; returns the blob id. */
  put(bytes: Uint8Array): Uint8Array {
    const id = blobIdOf(bytes);
    if (this.#held.has(id)) return id;
    const key = blobKey(id);
    if (this.#sent.has(key)) return id;
    const sent = this.#opened === undefined ? this.#kv.set(id, bytes) : this.#opened.then(() => this.#kv.set(id, bytes));
    const ack = sent.then(() => {
      this.#acked.add(key);
    });
    // Awaited through whenAcked(); keep an early failure from being "unhandled".
    ack.catch(() => {});
    this.#sent.set(key, ack);
    return id;
  }

  /** Resolves when every id is held or acknowledged; rejects with the first SET failure. */
  async whenAcked(ids: Iterable<Uint8Array>): Promise<void> {
    const waits: Promise<void>[] = [];
    for (const id of ids) {
      if (this.#held.has(id)) continue;
      const key = blobKey(id);
      const ack = this.#sent.get(key);
      if (ack === undefined) throw new BlobNotSyncedError(`blob ${key} was never sent to the client`);
      waits.push(ack);
    }
    await Promise.all(waits);
  }

  /** Synchronous barrier check used right before a checkpoint goes out. */
  assertAcked(ids: Iterable<Uint8Array>): void {
    for (const id of ids) {
      if (this.#held.has(id)) continue;
      const key = blobKey(id);
      if (!this.#acked.has(key)) throw new BlobNotSyncedError(`checkpoint references blob ${key} before its SET was acknowledged`);
    }
  }
}
