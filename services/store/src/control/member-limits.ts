/**
 * Per-member rate limits: requests and tokens per UTC minute, and runs at the
 * same time. A null field (or no row) is no limit.
 */
import { query, type Queryable } from "../database.ts";
import { ok, reject, type Outcome } from "../outcome.ts";
import { findMember } from "../members.ts";
import { isUuid } from "./uuid.ts";

export interface MemberLimitsRow {
  readonly memberId: string;
  readonly requestsPerMinute: number | null;
  readonly tokensPerMinute: bigint | null;
  readonly concurrentRuns: number | null;
}

interface LimitsDbRow {
  requests_per_minute: number | null;
  tokens_per_minute: string | null;
  concurrent_runs: number | null;
}

/** The member's limits (all null for a member id without a record, e.g. "local"). */
export async function findMemberLimits(db: Queryable, memberId: string): Promise<MemberLimitsRow> {
  const none: MemberLimitsRow = { memberId, requestsPerMinute: null, tokensPerMinute: null, concurrentRuns: null };
  if (!isUuid(memberId)) return none;
  const result = await query<LimitsDbRow>(db, "SELECT requests_per_minute, tokens_per_minute, concurrent_runs FROM member_limits WHERE member_id = $1", [memberId]);
  const row = result.rows[0];
  if (!row) return none;
  return {
    memberId,
    requestsPerMinute: row.requests_per_minute,
    tokensPerMinute: row.tokens_per_minute === null ? null : BigInt(row.tokens_per_minute),
    concurrentRuns: row.concurrent_runs,
  };
}

export async function getMemberLimits(db: Queryable, memberId: string): Promise<Outcome<MemberLimitsRow>> {
  const member = await findMember(db, memberId);
  if (!member) return reject("not_found", `member ${memberId} not found`);
  return ok(await findMemberLimits(db, member.id));
}

export async function setMemberLimits(db: Queryable, limits: MemberLimitsRow): Promise<Outcome<MemberLimitsRow>> {
  const member = await findMember(db, limits.memberId);
  if (!member) return reject("not_found", `member ${limits.memberId} not found`);
  for (const [name, value] of [
    ["requests_per_minute", limits.requestsPerMinute],
    ["tokens_per_minute", limits.tokensPerMinute],
    ["concurrent_runs", limits.concurrentRuns],
  ] as const) {
    if (value !== null && value <= 0) return reject("invalid", `${name} must be at least 1 (unset = no limit)`);
  }
  await query(
    db,
    `INSERT INTO member_limits (member_id, requests_per_minute, tokens_per_minute, concurrent_runs) VALUES ($1, $2, $3, $4)
     ON CONFLICT (member_id) DO UPDATE SET requests_per_minute = $2, tokens_per_minute = $3, concurrent_runs = $4, updated_at = now()`,
    [member.id, limits.requestsPerMinute, limits.tokensPerMinute?.toString() ?? null, limits.concurrentRuns],
  );
  return ok(await findMemberLimits(db, member.id));
}
