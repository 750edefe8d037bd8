/**
 * The JSON the admin API answers with and `npm run admin -- ... --json`
 * prints: one plain shape per store record (no protobuf type names, int64
 * counters as numbers, enums as lower-case words, unset = absent). The page,
 * the CLI and scripts all read these shapes.
 */
import type { MemberRecord, MemberUsage } from "@byok/contracts";

export interface MemberJson {
  memberId: string;
  name: string;
  createdAt: string;
  revokedAt?: string;
}

export function memberJson(m: MemberRecord): MemberJson {
  return { memberId: m.memberId, name: m.name, createdAt: m.createdAt, ...(m.revokedAt ? { revokedAt: m.revokedAt } : {}) };
}

/** member.usage rows with the protobuf type name left out and int64 sums as numbers. */
export function memberUsageJson(row: MemberUsage): Record<string, unknown> {
  const { $typeName: _type, ...fields } = row;
  return plain(fields) as Record<string, unknown>;
}

/** Deep copy with bigint as number (token counts stay far below 2^53). */
export function plain(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value, (_k, v: unknown) => (typeof v === "bigint" ? Number(v) : v))) as unknown;
}
