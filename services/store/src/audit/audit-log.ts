/**
 * audit.list: the audit log (migration 4; written by triggers and the
 * retention pass in the transaction of each action), newest first.
 */
import type pg from "pg";
import { query } from "../database.ts";
import { ok, reject, type Outcome } from "../outcome.ts";
import { parseRfc3339 } from "../rfc3339.ts";

export interface AuditFilter {
  readonly since: string;
  readonly until: string;
  readonly actionPrefix: string;
  readonly memberId: string;
  readonly limit: number;
  readonly beforeId: bigint;
}

export interface AuditRow {
  readonly id: bigint;
  readonly at: Date;
  readonly action: string;
  readonly actor: string;
  readonly memberId: string;
  readonly teamId: string;
  readonly keyId: string;
  readonly runId: string;
  readonly modelId: string;
  readonly details: Record<string, unknown>;
}

interface AuditDbRow {
  id: string;
  at: Date;
  action: string;
  actor: string;
  member_id: string | null;
  team_id: string | null;
  key_id: string | null;
  run_id: string | null;
  model_id: string | null;
  details: Record<string, unknown>;
}

const DEFAULT_LIMIT = 100;
const MAX_LIMIT = 1000;

export async function listAudit(pool: pg.Pool, filter: AuditFilter): Promise<Outcome<AuditRow[]>> {
  const conditions: string[] = [];
  const values: unknown[] = [];
  const add = (sql: string, value: unknown): void => {
    values.push(value);
    conditions.push(sql.replace("?", `$${values.length}`));
  };
  for (const [field, op] of [
    ["since", ">="],
    ["until", "<"],
  ] as const) {
    if (filter[field] === "") continue;
    const timestamp = parseRfc3339(filter[field]);
    if (!timestamp) return reject("invalid", `${field} is not an RFC 3339 timestamp`);
    add(`at ${op} ?::timestamptz`, timestamp.text);
  }
  if (filter.actionPrefix !== "") add("starts_with(action, ?)", filter.actionPrefix);
  if (filter.memberId !== "") add("member_id = ?", filter.memberId);
  if (filter.beforeId > 0n) add("id < ?", filter.beforeId.toString());
  const limit = filter.limit === 0 ? DEFAULT_LIMIT : Math.min(filter.limit, MAX_LIMIT);
  values.push(limit);
  const result = await query<AuditDbRow>(
    pool,
    `SELECT id, at, action, actor, member_id, team_id, key_id, run_id, model_id, details FROM audit_log
      ${conditions.length > 0 ? `WHERE ${conditions.join(" AND ")}` : ""}
      ORDER BY id DESC LIMIT $${values.length}`,
    values,
  );
  return ok(
    result.rows.map((r) => ({
      id: BigInt(r.id),
      at: r.at,
      action: r.action,
      actor: r.actor,
      memberId: r.member_id ?? "",
      teamId: r.team_id ?? "",
      keyId: r.key_id ?? "",
      runId: r.run_id ?? "",
      modelId: r.model_id ?? "",
      details: r.details,
    })),
  );
}
