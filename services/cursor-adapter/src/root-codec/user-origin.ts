/**
 * A user-role root does not say where it came from; the id does. Cursor and the
 * reference servers use "request-context:<digest>" for injected context and
 * "runtime:<event>" for runtime messages; our compactions write "summary:<revision>"
 * for the summary message; anything else is typed by the member.
 */
import { UserOrigin } from "@byok/contracts";

export const CONTEXT_ID_PREFIX = "request-context:";
export const RUNTIME_ID_PREFIX = "runtime:";
/** Client id prefix of a compaction summary message ("summary:<revision it replaced>"). */
export const SUMMARY_ID_PREFIX = "summary:";

export function originFromClientId(clientId: string): UserOrigin {
  if (clientId.startsWith(CONTEXT_ID_PREFIX)) return UserOrigin.CONTEXT;
  if (clientId.startsWith(RUNTIME_ID_PREFIX)) return UserOrigin.RUNTIME;
  if (clientId.startsWith(SUMMARY_ID_PREFIX)) return UserOrigin.SUMMARY;
  return UserOrigin.USER;
}

const NAMES: ReadonlyArray<readonly [UserOrigin, string]> = [
  [UserOrigin.UNSPECIFIED, "unspecified"],
  [UserOrigin.USER, "user"],
  [UserOrigin.CONTEXT, "context"],
  [UserOrigin.RUNTIME, "runtime"],
  [UserOrigin.SUMMARY, "summary"],
];

export function originName(origin: UserOrigin): string {
  return NAMES.find(([o]) => o === origin)?.[1] ?? "unspecified";
}

export function originFromName(name: string): UserOrigin | undefined {
  return NAMES.find(([, n]) => n === name)?.[0];
}
