/**
 * The UTC windows budgets and rate limits count in: a day from 00:00, a week
 * from Monday 00:00, a month from the 1st 00:00, a minute from second 0. A
 * window is [start, end). Computed from the store's clock (`now` is passed in
 * so tests can fix it).
 */

export type BudgetPeriod = "daily" | "weekly" | "monthly";

export interface TimeWindow {
  readonly start: Date;
  readonly end: Date;
}

const DAY_MS = 86_400_000;
const MINUTE_MS = 60_000;

export function budgetWindow(period: BudgetPeriod, at: Date): TimeWindow {
  const day = Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate());
  switch (period) {
    case "daily":
      return { start: new Date(day), end: new Date(day + DAY_MS) };
    case "weekly": {
      // getUTCDay: Sunday 0 ... Saturday 6; weeks start on Monday.
      const sinceMonday = (at.getUTCDay() + 6) % 7;
      const start = day - sinceMonday * DAY_MS;
      return { start: new Date(start), end: new Date(start + 7 * DAY_MS) };
    }
    case "monthly":
      return { start: new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1)), end: new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1)) };
    default: {
      const never: never = period;
      throw new Error(`unknown budget period ${String(never)}`);
    }
  }
}

export function minuteWindow(at: Date): TimeWindow {
  const start = Math.floor(at.getTime() / MINUTE_MS) * MINUTE_MS;
  return { start: new Date(start), end: new Date(start + MINUTE_MS) };
}
