/** Cursor blob ids: SHA-256 of the blob bytes, 32 raw bytes (cursor-agent-protocol §4.2). */
import { createHash } from "node:crypto";

export const BLOB_ID_BYTES = 32;

function sha256(bytes: Uint8Array): Buffer {
  return createHash("sha256").update(bytes).digest();
}

export function blobIdOf(bytes: Uint8Array): Uint8Array {
  return new Uint8Array(sha256(bytes));
}

/** Keys made, by id array: a checkpoint's root ids are keyed again and again (ids are never changed). */
const keys = new WeakMap<Uint8Array, string>();

/** Map key / log form of a blob id. */
export function blobKey(id: Uint8Array): string {
  let key = keys.get(id);
  if (key === undefined) {
    key = Buffer.from(id.buffer, id.byteOffset, id.byteLength).toString("hex");
    keys.set(id, key);
  }
  return key;
}

export function blobMatches(id: Uint8Array, bytes: Uint8Array): boolean {
  return sha256(bytes).equals(id);
}
