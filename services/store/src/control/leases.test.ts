import { describe, expect, it } from "vitest";
import { grantSize } from "./leases.ts";

describe("the grant rule", () => {
  it("grants at least the need, at most the want and a quarter of what is left (rounded up)", () => {
    expect(grantSize(1000n, 10n, 80n, false)).toBe(80n);
    expect(grantSize(100n, 10n, 80n, false)).toBe(25n);
    expect(grantSize(30n, 10n, 80n, false)).toBe(10n);
    expect(grantSize(10n, 10n, 80n, false)).toBe(10n);
    // A want below the need is the need.
    expect(grantSize(1000n, 10n, 1n, false)).toBe(10n);
  });

  it("overdrafts by the need only while something is left, and never without overdraft", () => {
    expect(grantSize(3n, 10n, 80n, true)).toBe(10n);
    expect(grantSize(3n, 10n, 80n, false)).toBe(0n);
    expect(grantSize(0n, 10n, 80n, true)).toBe(0n);
    expect(grantSize(-5n, 10n, 80n, true)).toBe(0n);
  });
});
