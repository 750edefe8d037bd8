import { describe, expect, it } from "vitest";
import { budgetWindow, minuteWindow } from "./windows.ts";

const at = (iso: string) => new Date(iso);
const span = (w: { start: Date; end: Date }) => [w.start.toISOString(), w.end.toISOString()];

describe("UTC windows", () => {
  it("starts a day at 00:00, a week on Monday 00:00, a month on the 1st", () => {
    // 2026-03-01 is a Sunday.
    expect(span(budgetWindow("daily", at("2026-03-01T23:59:59.999Z")))).toEqual(["2026-03-01T00:00:00.000Z", "2026-03-02T00:00:00.000Z"]);
    expect(span(budgetWindow("weekly", at("2026-03-01T12:00:00Z")))).toEqual(["2026-02-23T00:00:00.000Z", "2026-03-02T00:00:00.000Z"]);
    expect(span(budgetWindow("weekly", at("2026-03-02T00:00:00Z")))).toEqual(["2026-03-02T00:00:00.000Z", "2026-03-09T00:00:00.000Z"]);
    expect(span(budgetWindow("monthly", at("2026-12-31T23:00:00Z")))).toEqual(["2026-12-01T00:00:00.000Z", "2027-01-01T00:00:00.000Z"]);
    expect(span(budgetWindow("monthly", at("2028-02-29T10:00:00Z")))).toEqual(["2028-02-01T00:00:00.000Z", "2028-03-01T00:00:00.000Z"]);
  });

  it("counts minutes from second 0", () => {
    expect(span(minuteWindow(at("2026-03-10T12:00:59.999Z")))).toEqual(["2026-03-10T12:00:00.000Z", "2026-03-10T12:01:00.000Z"]);
  });
});
