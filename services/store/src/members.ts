/**
 * Team members. A member belongs to one team (the default team unless put in
 * another) and holds gateway keys (control/member-keys.ts): member.create
 * makes the first one. Revoking a member stops every one of its keys.
 */
import { randomUUID } from "node:crypto";
import type pg from "pg";
import { inTransaction, query, type Queryable } from "./database.ts";
import { ok, reject, type Outcome } from "./outcome.ts";
import { insertKey, KEY_PREFIX, keyHash, parseExpiry } from "./control/member-keys.ts";
import { resolveTeamId } from "./control/teams.ts";
import { isUuid } from "./control/uuid.ts";

export interface MemberRow {
  readonly id: string;
  readonly name: string;
  readonly teamId: string;
  readonly createdAt: Date;
  readonly revokedAt: Date | null;
}

interface MemberDbRow {
  id: string;
  name: string;
  team_id: string;
  created_at: Date;
  revoked_at: Date | null;
}

const COLUMNS = "id, name, team_id, created_at, revoked_at";

function fromDb(row: MemberDbRow): MemberRow {
  return { id: row.id, name: row.name, teamId: row.team_id, createdAt: row.created_at, revokedAt: row.revoked_at };
}

export interface CreateMemberInput {
  readonly name: string;
  /** "" = the default team. */
  readonly teamId: string;
  readonly keyLabel: string;
  /** RFC 3339; "" = never. */
  readonly keyExpiresAt: string;
}

export function createMember(pool: pg.Pool, input: CreateMemberInput, now: Date): Promise<Outcome<{ member: MemberRow; key: string; keyId: string }>> {
  const trimmed = input.name.trim();
  if (trimmed === "") return Promise.resolve(reject("invalid", "member name is required"));
  const expiry = parseExpiry(input.keyExpiresAt, now);
  if (expiry.kind !== "ok") return Promise.resolve(expiry);
  return inTransaction(pool, async (tx) => {
    const team = await resolveTeamId(tx, input.teamId);
    if (team.kind !== "ok") return team;
    const result = await query<MemberDbRow>(tx, `INSERT INTO members (id, name, team_id) VALUES ($1, $2, $3) RETURNING ${COLUMNS}`, [randomUUID(), trimmed, team.value]);
    const member = fromDb(result.rows[0] as MemberDbRow);
    const made = await insertKey(tx, member.id, input.keyLabel, expiry.value);
    return ok({ member, key: made.secret, keyId: made.id });
  });
}

/** Revokes the member (every key stops verifying); revoking twice keeps the first revocation time. */
export async function revokeMember(pool: pg.Pool, memberId: string): Promise<Outcome<MemberRow>> {
  if (!isUuid(memberId)) return reject("not_found", `member ${memberId} not found`);
  const result = await query<MemberDbRow>(pool, `UPDATE members SET revoked_at = COALESCE(revoked_at, now()) WHERE id = $1 RETURNING ${COLUMNS}`, [memberId]);
  const row = result.rows[0];
  return row ? ok(fromDb(row)) : reject("not_found", `member ${memberId} not found`);
}

export interface VerifiedKey {
  readonly member: MemberRow;
  readonly keyId: string;
}

/** The active member holding `key`; NOT_FOUND for unknown, revoked or expired keys and for revoked members. */
export async function verifyMemberKey(pool: pg.Pool, key: string, now: Date): Promise<Outcome<VerifiedKey>> {
  if (!key.startsWith(KEY_PREFIX)) return reject("not_found", "unknown member key");
  const result = await query<MemberDbRow & { key_id: string }>(
    pool,
    `SELECT m.id, m.name, m.team_id, m.created_at, m.revoked_at, k.id AS key_id
       FROM member_keys k JOIN members m ON m.id = k.member_id
      WHERE k.key_hash = $1 AND k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > $2) AND m.revoked_at IS NULL`,
    [keyHash(key), now],
  );
  const row = result.rows[0];
  return row ? ok({ member: fromDb(row), keyId: row.key_id }) : reject("not_found", "unknown, revoked or expired member key");
}

/** Oldest first; `teamId` "" = every team. */
export async function listMembers(pool: pg.Pool, includeRevoked: boolean, teamId = ""): Promise<Outcome<MemberRow[]>> {
  if (teamId !== "" && !isUuid(teamId)) return ok([]);
  const result = await query<MemberDbRow>(
    pool,
    `SELECT ${COLUMNS} FROM members WHERE ($1 OR revoked_at IS NULL) AND ($2 = '' OR team_id::text = $2) ORDER BY created_at, id`,
    [includeRevoked, teamId],
  );
  return ok(result.rows.map(fromDb));
}

export async function findMember(db: Queryable, memberId: string): Promise<MemberRow | undefined> {
  if (!isUuid(memberId)) return undefined;
  const result = await query<MemberDbRow>(db, `SELECT ${COLUMNS} FROM members WHERE id = $1`, [memberId]);
  const row = result.rows[0];
  return row ? fromDb(row) : undefined;
}

export async function getMember(db: Queryable, memberId: string): Promise<Outcome<MemberRow>> {
  const member = await findMember(db, memberId);
  return member ? ok(member) : reject("not_found", `member ${memberId} not found`);
}

/** Moves the member to another team (its later calls count there). */
export function setMemberTeam(pool: pg.Pool, memberId: string, teamId: string): Promise<Outcome<MemberRow>> {
  return inTransaction(pool, async (tx) => {
    if (!isUuid(memberId)) return reject("not_found", `member ${memberId} not found`);
    if (teamId === "") return reject("invalid", "team_id is required");
    const team = await resolveTeamId(tx, teamId);
    if (team.kind !== "ok") return team;
    const result = await query<MemberDbRow>(tx, `UPDATE members SET team_id = $2 WHERE id = $1 RETURNING ${COLUMNS}`, [memberId, team.value]);
    const row = result.rows[0];
    return row ? ok(fromDb(row)) : reject("not_found", `member ${memberId} not found`);
  });
}
