/**
 * The client-side blob store of the fake IDE: content-addressed (id = SHA-256
 * of the bytes), kept across runs and turns like the real client's.
 */
import { createHash } from "node:crypto";

export function blobIdOf(data: Uint8Array): Uint8Array {
  return new Uint8Array(createHash("sha256").update(data).digest());
}

export function blobKey(id: Uint8Array): string {
  return Buffer.from(id).toString("hex");
}

export type BlobSetOutcome = { kind: "stored" } | { kind: "hash_mismatch"; actual: string };

export class BlobStore {
  private readonly blobs = new Map<string, Uint8Array>();

  /** SET as the IDE does it: the id must be the SHA-256 of the data. */
  set(id: Uint8Array, data: Uint8Array): BlobSetOutcome {
    const actual = blobKey(blobIdOf(data));
    if (actual !== blobKey(id)) return { kind: "hash_mismatch", actual };
    this.blobs.set(actual, data);
    return { kind: "stored" };
  }

  /** Adds bytes and returns their id (for tests building a client-side history). */
  put(data: Uint8Array): Uint8Array {
    const id = blobIdOf(data);
    this.blobs.set(blobKey(id), data);
    return id;
  }

  get(id: Uint8Array): Uint8Array | undefined {
    return this.blobs.get(blobKey(id));
  }

  has(id: Uint8Array): boolean {
    return this.blobs.has(blobKey(id));
  }

  /** Parses a stored blob as UTF-8 JSON (root messages). */
  json(id: Uint8Array): unknown {
    const data = this.get(id);
    if (data === undefined) throw new Error(`blob ${blobKey(id)} is not in the client store`);
    return JSON.parse(Buffer.from(data).toString("utf8"));
  }

  get size(): number {
    return this.blobs.size;
  }
}
