/**
 * Who sent a request and which of its headers the run session may see. The
 * edge proxy authenticates members and sets `x-byok-member-id` (it strips any
 * client-sent x-byok-* header); without the proxy every caller is LOCAL_MEMBER_ID.
 */
import { LOCAL_MEMBER_ID, parseMemberId, type MemberId } from "@byok/contracts";

export const MEMBER_ID_HEADER = "x-byok-member-id";

/** Credentials the session never needs (Cursor's own token, cookies). */
const WITHHELD_HEADERS = new Set(["authorization", "proxy-authorization", "cookie"]);

/** What these functions read of a request's headers (web Headers, or a plain view of node's). */
export type RequestHeaders = Pick<Headers, "get" | "forEach">;

export function memberIdOf(headers: RequestHeaders): MemberId {
  const value = headers.get(MEMBER_ID_HEADER)?.trim();
  return value ? parseMemberId(value) : LOCAL_MEMBER_ID;
}

/** Lower-case request headers for RunOpenContext, credentials removed. */
export function sessionHeaders(headers: RequestHeaders): Record<string, string> {
  const result: Record<string, string> = {};
  headers.forEach((value, name) => {
    const key = name.toLowerCase();
    if (!WITHHELD_HEADERS.has(key)) result[key] = value;
  });
  return result;
}
