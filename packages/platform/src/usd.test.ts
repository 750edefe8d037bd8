import { describe, expect, it } from "vitest";
import { formatUsd, parsePricePerMillion, parseUsd } from "./usd.ts";

describe("USD amounts", () => {
  it("parses decimals into picodollars and prints them back in their shortest form", () => {
    expect(parseUsd("1.25")).toBe(1_250_000_000_000n);
    expect(parseUsd("0.000000000001")).toBe(1n);
    expect(parseUsd("5")).toBe(5_000_000_000_000n);
    expect(formatUsd(1_250_000_000_000n)).toBe("1.25");
    expect(formatUsd(1n)).toBe("0.000000000001");
    expect(formatUsd(0n)).toBe("0");
    expect(formatUsd(-500_000_000_000n)).toBe("-0.5");
  });

  it("refuses what is not a non-negative decimal with at most 12 fractional digits", () => {
    for (const bad of ["", "-1", "1e3", "0.0000000000001", "01", "1.", ".5", "abc"]) expect(parseUsd(bad), bad).toBeUndefined();
  });

  it("reads prices per million tokens exactly, from numbers and strings", () => {
    expect(parsePricePerMillion(0.075)).toBe(75_000n);
    expect(parsePricePerMillion("3.75")).toBe(3_750_000n);
    expect(parsePricePerMillion(15)).toBe(15_000_000n);
    expect(parsePricePerMillion(0.1 + 0.2)).toBeUndefined(); // 0.30000000000000004: more than 6 decimals
    expect(parsePricePerMillion(-1)).toBeUndefined();
    expect(parsePricePerMillion(1e-7)).toBeUndefined();
  });
});
