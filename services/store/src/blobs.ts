/** Content-addressed blobs: id = SHA-256(bytes), checked here and by the database. */
import { createHash } from "node:crypto";
import type pg from "pg";
import { preparedQuery } from "./database.ts";
import { ok, reject, type Outcome } from "./outcome.ts";

export interface StoredBlob {
  readonly id: Uint8Array;
  readonly data: Uint8Array;
}

export function blobId(data: Uint8Array): Buffer {
  return createHash("sha256").update(data).digest();
}

/**
 * Stores `data` (once) and returns its id; `expectedId`, when given, must
 * match. `conversationId` ("" = none) records that the conversation refers to
 * the blob (blob_refs, in the same statement): retention deletes a blob only
 * when no conversation that refers to it keeps its content.
 */
export async function putBlob(pool: pg.Pool, data: Uint8Array, expectedId: Uint8Array, conversationId = ""): Promise<Outcome<Buffer>> {
  const id = blobId(data);
  if (expectedId.length > 0 && !id.equals(expectedId))
    return reject("invalid", `blob id ${Buffer.from(expectedId).toString("hex")} does not match SHA-256 of the data (${id.toString("hex")})`);
  await preparedQuery(
    pool,
    `WITH stored AS (INSERT INTO blobs (id, bytes) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING)
     INSERT INTO blob_refs (conversation_id, blob_id) SELECT $3, $1 WHERE $3 <> '' ON CONFLICT DO NOTHING`,
    [id, data, conversationId],
  );
  return ok(id);
}

/** putBlob for several blobs of one conversation, in one statement; their ids in order. */
export async function putBlobs(pool: pg.Pool, data: readonly Uint8Array[], conversationId = ""): Promise<Outcome<Buffer[]>> {
  const ids = data.map(blobId);
  if (ids.length === 0) return ok([]);
  await preparedQuery(
    pool,
    `WITH input AS (SELECT * FROM unnest($1::bytea[], $2::bytea[]) AS t(id, bytes)),
          stored AS (INSERT INTO blobs (id, bytes) SELECT DISTINCT ON (id) id, bytes FROM input ON CONFLICT (id) DO NOTHING)
     INSERT INTO blob_refs (conversation_id, blob_id) SELECT DISTINCT $3::text, id FROM input WHERE $3 <> '' ON CONFLICT DO NOTHING`,
    [ids, data.map((d) => Buffer.from(d.buffer, d.byteOffset, d.byteLength)), conversationId],
  );
  return ok(ids);
}

/** The blobs that exist among `ids` (in request order); a stored blob whose bytes no longer hash to its id is an error. */
export async function getBlobs(pool: pg.Pool, ids: readonly Uint8Array[]): Promise<Outcome<StoredBlob[]>> {
  const malformed = ids.find((id) => id.length !== 32);
  if (malformed) return reject("invalid", `blob ids are 32-byte SHA-256 digests (got ${malformed.length} bytes)`);
  if (ids.length === 0) return ok([]);
  const result = await preparedQuery<{ id: Buffer; bytes: Buffer }>(pool, "SELECT id, bytes FROM blobs WHERE id = ANY($1::bytea[])", [ids.map((id) => Buffer.from(id))]);
  const byId = new Map(result.rows.map((r) => [r.id.toString("hex"), r.bytes]));
  const found: StoredBlob[] = [];
  const seen = new Set<string>();
  for (const id of ids) {
    const key = Buffer.from(id).toString("hex");
    const bytes = byId.get(key);
    if (!bytes || seen.has(key)) continue;
    seen.add(key);
    if (!blobId(bytes).equals(id)) throw new Error(`stored blob ${key} is corrupt (content hash differs)`);
    found.push({ id: Buffer.from(id), data: bytes });
  }
  return ok(found);
}
