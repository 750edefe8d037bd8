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

/** A member.usage row: the store's fields, int64 sums as numbers, unreported sums absent. */
export interface MemberUsageJson {
  memberId: string;
  name: string;
  runs: number;
  completed: number;
  failed: number;
  cancelled: number;
  inputTokens?: number;
  inputTokensRuns: number;
  outputTokens?: number;
  outputTokensRuns: number;
  cacheReadTokens?: number;
  cacheReadTokensRuns: number;
  cacheWriteTokens?: number;
  cacheWriteTokensRuns: number;
  reasoningTokens?: number;
  reasoningTokensRuns: number;
}

export function memberUsageJson(row: MemberUsage): MemberUsageJson {
  const { $typeName: _type, ...fields } = row;
  return plain(fields) as MemberUsageJson;
}

/** Deep copy with bigint as number (token counts stay far below 2^53). */
export function plain(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value, (_k, v: unknown) => (typeof v === "bigint" ? Number(v) : v))) as unknown;
}
