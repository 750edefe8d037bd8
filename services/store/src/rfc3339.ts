/**
 * RFC 3339 timestamps from requests ("2026-01-31T12:00:00Z",
 * "2026-01-31T12:00:00.123456+02:00"). Checked here so that a bad one is the
 * caller's INVALID request, never a database error. The text itself goes on to
 * Postgres (which keeps microseconds, unlike a JS Date).
 */

export interface Timestamp {
  /** The timestamp as given (separator and zone letter upper-cased), for SQL `::timestamptz`. */
  readonly text: string;
  /** Microseconds since the epoch (fraction digits beyond the sixth ignored), for comparisons. */
  readonly epochMicros: bigint;
}

const RFC_3339 = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(Z|[+-]\d{2}:\d{2})$/;

/** Like Date.UTC with a 1-based month, but years 0-99 stay years 0-99. */
function utcMillis(year: number, month: number, day: number, hour = 0, minute = 0, second = 0): number {
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, 0);
  return date.getTime();
}

function daysInMonth(year: number, month: number): number {
  return new Date(utcMillis(year, month + 1, 0)).getUTCDate();
}

function zoneOffsetMinutes(zone: string): number | undefined {
  if (zone === "Z") return 0;
  const hours = Number(zone.slice(1, 3));
  const minutes = Number(zone.slice(4, 6));
  if (hours > 23 || minutes > 59) return undefined;
  return (zone.startsWith("-") ? -1 : 1) * (hours * 60 + minutes);
}

/** The timestamp, or undefined when `text` is not a valid RFC 3339 date-time. */
export function parseRfc3339(text: string): Timestamp | undefined {
  const normalized = text.toUpperCase();
  const match = RFC_3339.exec(normalized);
  if (!match) return undefined;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  const fraction = match[7] ?? "";
  const offset = zoneOffsetMinutes(match[8] as string);
  if (offset === undefined) return undefined;
  // Second 60 is a leap second (RFC 3339 allows it; it rolls over into the next minute).
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month) || hour > 23 || minute > 59 || second > 60) return undefined;
  const epochMillis = utcMillis(year, month, day, hour, minute, second) - offset * 60_000;
  const micros = BigInt(fraction.slice(0, 6).padEnd(6, "0"));
  return { text: normalized, epochMicros: BigInt(epochMillis) * 1000n + micros };
}
