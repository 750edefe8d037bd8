/**
 * Member keys: a member may hold several (create, list, revoke, rotate, each
 * with an optional expiry). A key is shown once, when it is made; the store
 * keeps only its SHA-256, so a lost key is replaced, never recovered.
 */
import { createHash, randomBytes, randomUUID } from "node:crypto";
import { inTransaction, query, type Queryable, type Transaction } from "../database.ts";
import { ok, reject, type Outcome } from "../outcome.ts";
import type pg from "pg";
import { parseRfc3339 } from "../rfc3339.ts";
import { isUuid } from "./uuid.ts";

export const KEY_PREFIX = "byok_";

export interface MemberKeyRow {
  readonly id: string;
  readonly memberId: string;
  readonly label: string;
  readonly createdAt: Date;
  readonly expiresAt: Date | null;
  readonly revokedAt: Date | null;
  readonly replacedBy: string | null;
  /** Verifies now: not revoked, not expired, member not revoked. */
  readonly active: boolean;
}

interface MemberKeyDbRow {
  id: string;
  member_id: string;
  label: string;
  created_at: Date;
  expires_at: Date | null;
  revoked_at: Date | null;
  replaced_by: string | null;
  member_revoked_at: Date | null;
}

const SELECT_KEYS = `
SELECT k.id, k.member_id, k.label, k.created_at, k.expires_at, k.revoked_at, k.replaced_by, m.revoked_at AS member_revoked_at
  FROM member_keys k JOIN members m ON m.id = k.member_id`;

function fromDb(row: MemberKeyDbRow, now: Date): MemberKeyRow {
  const active = row.revoked_at === null && row.member_revoked_at === null && (row.expires_at === null || row.expires_at.getTime() > now.getTime());
  return {
    id: row.id,
    memberId: row.member_id,
    label: row.label,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    revokedAt: row.revoked_at,
    replacedBy: row.replaced_by,
    active,
  };
}

export function keyHash(key: string): Buffer {
  return createHash("sha256").update(key, "utf8").digest();
}

/** An expiry from a request: "" = never; it must lie in the future. */
export function parseExpiry(text: string, now: Date): Outcome<string | null> {
  if (text === "") return ok(null);
  const timestamp = parseRfc3339(text);
  if (!timestamp) return reject("invalid", `expires_at is not an RFC 3339 timestamp: ${JSON.stringify(text)}`);
  if (timestamp.epochMicros <= BigInt(now.getTime()) * 1000n) return reject("invalid", `expires_at ${text} is not in the future`);
  return ok(timestamp.text);
}

/** Inserts a new key for `memberId` (in the caller's transaction); the secret is returned once. */
export async function insertKey(tx: Queryable, memberId: string, label: string, expiresAt: string | null): Promise<{ id: string; secret: string }> {
  const secret = KEY_PREFIX + randomBytes(32).toString("base64url");
  const id = randomUUID();
  await query(tx, "INSERT INTO member_keys (id, member_id, key_hash, label, expires_at) VALUES ($1, $2, $3, $4, $5::timestamptz)", [id, memberId, keyHash(secret), label.trim(), expiresAt]);
  return { id, secret };
}

async function findKey(db: Queryable, keyId: string, now: Date, lock = false): Promise<MemberKeyRow | undefined> {
  if (!isUuid(keyId)) return undefined;
  const result = await query<MemberKeyDbRow>(db, `${SELECT_KEYS} WHERE k.id = $1${lock ? " FOR UPDATE OF k" : ""}`, [keyId]);
  const row = result.rows[0];
  return row ? fromDb(row, now) : undefined;
}

async function lockActiveMember(tx: Transaction, memberId: string): Promise<Outcome<null>> {
  if (!isUuid(memberId)) return reject("not_found", `member ${memberId} not found`);
  const result = await query<{ revoked_at: Date | null }>(tx, "SELECT revoked_at FROM members WHERE id = $1 FOR UPDATE", [memberId]);
  const row = result.rows[0];
  if (!row) return reject("not_found", `member ${memberId} not found`);
  if (row.revoked_at !== null) return reject("invalid", `member ${memberId} is revoked`);
  return ok(null);
}

export function createKey(pool: pg.Pool, input: { memberId: string; label: string; expiresAt: string }, now: Date): Promise<Outcome<{ key: MemberKeyRow; secret: string }>> {
  const expiry = parseExpiry(input.expiresAt, now);
  if (expiry.kind !== "ok") return Promise.resolve(expiry);
  return inTransaction(pool, async (tx) => {
    const member = await lockActiveMember(tx, input.memberId);
    if (member.kind !== "ok") return member;
    const made = await insertKey(tx, input.memberId, input.label, expiry.value);
    const key = await findKey(tx, made.id, now);
    if (!key) throw new Error(`key ${made.id} vanished`);
    return ok({ key, secret: made.secret });
  });
}

/** Newest first; only keys that verify now unless `includeInactive`. */
export async function listKeys(db: Queryable, memberId: string, includeInactive: boolean, now: Date): Promise<Outcome<MemberKeyRow[]>> {
  if (!isUuid(memberId)) return reject("not_found", `member ${memberId} not found`);
  const exists = await query(db, "SELECT 1 FROM members WHERE id = $1", [memberId]);
  if (exists.rowCount === 0) return reject("not_found", `member ${memberId} not found`);
  const result = await query<MemberKeyDbRow>(db, `${SELECT_KEYS} WHERE k.member_id = $1 ORDER BY k.created_at DESC, k.id`, [memberId]);
  const keys = result.rows.map((row) => fromDb(row, now));
  return ok(includeInactive ? keys : keys.filter((k) => k.active));
}

/** Revoking twice keeps the first revocation time. */
export async function revokeKey(db: Queryable, keyId: string, now: Date): Promise<Outcome<MemberKeyRow>> {
  if (!isUuid(keyId)) return reject("not_found", `key ${keyId} not found`);
  const result = await query(db, "UPDATE member_keys SET revoked_at = COALESCE(revoked_at, $2) WHERE id = $1", [keyId, now]);
  if (result.rowCount === 0) return reject("not_found", `key ${keyId} not found`);
  const key = await findKey(db, keyId, now);
  return key ? ok(key) : reject("not_found", `key ${keyId} not found`);
}

/**
 * A new key (same member and label) replaces an active one: the old key stops
 * verifying now, or after `graceSeconds` (its expiry moves forward, never back).
 */
export function rotateKey(
  pool: pg.Pool,
  input: { keyId: string; expiresAt: string; graceSeconds: number },
  now: Date,
): Promise<Outcome<{ key: MemberKeyRow; secret: string; previous: MemberKeyRow }>> {
  const expiry = parseExpiry(input.expiresAt, now);
  if (expiry.kind !== "ok") return Promise.resolve(expiry);
  return inTransaction(pool, async (tx) => {
    const old = await findKey(tx, input.keyId, now, true);
    if (!old) return reject("not_found", `key ${input.keyId} not found`);
    if (!old.active) return reject("invalid", `key ${input.keyId} is not active (revoked, expired or its member revoked)`);
    const made = await insertKey(tx, old.memberId, old.label, expiry.value);
    if (input.graceSeconds > 0) {
      const until = new Date(now.getTime() + input.graceSeconds * 1000);
      await query(tx, "UPDATE member_keys SET replaced_by = $2, expires_at = LEAST(COALESCE(expires_at, $3), $3) WHERE id = $1", [old.id, made.id, until]);
    } else {
      await query(tx, "UPDATE member_keys SET replaced_by = $2, revoked_at = $3 WHERE id = $1", [old.id, made.id, now]);
    }
    const key = await findKey(tx, made.id, now);
    const previous = await findKey(tx, old.id, now);
    if (!key || !previous) throw new Error(`key ${made.id} or ${old.id} vanished`);
    return ok({ key, secret: made.secret, previous });
  });
}
