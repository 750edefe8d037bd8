/**
 * Team members and their gateway keys. A key is shown once, at creation; the
 * store keeps only its SHA-256, so a lost key is replaced, never recovered.
 */
import { createHash, randomBytes, randomUUID } from "node:crypto";
import type pg from "pg";
import { query } from "./database.ts";
import { ok, reject, type Outcome } from "./outcome.ts";

export interface MemberRow {
  readonly id: string;
  readonly name: string;
  readonly createdAt: Date;
  readonly revokedAt: Date | null;
}

interface MemberDbRow {
  id: string;
  name: string;
  created_at: Date;
  revoked_at: Date | null;
}

function fromDb(row: MemberDbRow): MemberRow {
  return { id: row.id, name: row.name, createdAt: row.created_at, revokedAt: row.revoked_at };
}

const KEY_PREFIX = "byok_";
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function keyHash(key: string): Buffer {
  return createHash("sha256").update(key, "utf8").digest();
}

export async function createMember(pool: pg.Pool, name: string): Promise<Outcome<{ member: MemberRow; key: string }>> {
  const trimmed = name.trim();
  if (trimmed === "") return reject("invalid", "member name is required");
  const key = KEY_PREFIX + randomBytes(32).toString("base64url");
  const result = await query<MemberDbRow>(pool, "INSERT INTO members (id, name, key_hash) VALUES ($1, $2, $3) RETURNING id, name, created_at, revoked_at", [
    randomUUID(),
    trimmed,
    keyHash(key),
  ]);
  return ok({ member: fromDb(result.rows[0] as MemberDbRow), key });
}

/** Revokes the member's key; revoking twice keeps the first revocation time. */
export async function revokeMember(pool: pg.Pool, memberId: string): Promise<Outcome<MemberRow>> {
  if (!UUID.test(memberId)) return reject("not_found", `member ${memberId} not found`);
  const result = await query<MemberDbRow>(
    pool,
    "UPDATE members SET revoked_at = COALESCE(revoked_at, now()) WHERE id = $1 RETURNING id, name, created_at, revoked_at",
    [memberId],
  );
  const row = result.rows[0];
  return row ? ok(fromDb(row)) : reject("not_found", `member ${memberId} not found`);
}

/** The active member holding `key`; NOT_FOUND for unknown or revoked keys. */
export async function verifyMemberKey(pool: pg.Pool, key: string): Promise<Outcome<MemberRow>> {
  if (!key.startsWith(KEY_PREFIX)) return reject("not_found", "unknown member key");
  const result = await query<MemberDbRow>(pool, "SELECT id, name, created_at, revoked_at FROM members WHERE key_hash = $1 AND revoked_at IS NULL", [
    keyHash(key),
  ]);
  const row = result.rows[0];
  return row ? ok(fromDb(row)) : reject("not_found", "unknown or revoked member key");
}

export async function listMembers(pool: pg.Pool, includeRevoked: boolean): Promise<Outcome<MemberRow[]>> {
  const result = await query<MemberDbRow>(
    pool,
    `SELECT id, name, created_at, revoked_at FROM members ${includeRevoked ? "" : "WHERE revoked_at IS NULL"} ORDER BY created_at, id`,
  );
  return ok(result.rows.map(fromDb));
}
