import { describe, expect, it } from "vitest";
import { parseRfc3339 } from "./rfc3339.ts";

describe("parseRfc3339", () => {
  it("reads date-times with a zone, keeping microseconds", () => {
    const utc = parseRfc3339("2026-03-01T10:00:00.123456Z");
    expect(utc?.epochMicros).toBe(BigInt(Date.UTC(2026, 2, 1, 10)) * 1000n + 123_456n);
    expect(parseRfc3339("2026-03-01t12:30:00.123456+02:30")?.epochMicros).toBe(utc!.epochMicros);
    expect(parseRfc3339("2026-03-01t10:00:00z")?.text).toBe("2026-03-01T10:00:00Z");
    expect(parseRfc3339("2024-02-29T00:00:00-05:00")?.epochMicros).toBe(BigInt(Date.UTC(2024, 1, 29, 5)) * 1000n);
    expect(parseRfc3339("0050-01-01T00:00:00Z")?.epochMicros).toBe(BigInt(Date.parse("0050-01-01T00:00:00Z")) * 1000n);
  });

  it("rejects anything else", () => {
    for (const text of [
      "",
      "now",
      "2026-03-01",
      "2026-03-01T10:00:00",
      "2026-03-01 10:00:00Z",
      "2026-02-29T00:00:00Z",
      "2026-04-31T00:00:00Z",
      "2026-00-10T00:00:00Z",
      "2026-03-01T24:00:00Z",
      "2026-03-01T10:60:00Z",
      "2026-03-01T10:00:00+24:00",
      "2026-03-01T10:00:00.Z",
      " 2026-03-01T10:00:00Z",
    ]) {
      expect(parseRfc3339(text), text).toBeUndefined();
    }
  });
});
