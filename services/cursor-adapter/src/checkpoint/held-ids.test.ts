import { describe, expect, it } from "vitest";
import { blobIdOf } from "./blob-id.ts";
import { HeldIds } from "./held-ids.ts";

const encoder = new TextEncoder();

describe("HeldIds", () => {
  it("finds an id it was given, and a copy of it, but no other id", () => {
    const held = new HeldIds();
    const ids = Array.from({ length: 500 }, (_, i) => blobIdOf(encoder.encode(`root ${i}`)));
    for (const id of ids) held.add(id);
    for (const id of ids) expect(held.has(id)).toBe(true);
    expect(held.has(new Uint8Array(ids[123]!))).toBe(true);
    expect(held.has(blobIdOf(encoder.encode("root 500")))).toBe(false);
  });

  it("tells apart ids that share their first bytes, and ids of other lengths", () => {
    const held = new HeldIds();
    const a = new Uint8Array(32).fill(1);
    const b = new Uint8Array(32).fill(1);
    b[31] = 2;
    held.add(a);
    expect(held.has(b)).toBe(false);
    held.add(b);
    expect(held.has(new Uint8Array(b))).toBe(true);
    expect(held.has(new Uint8Array(4).fill(1))).toBe(false);
    expect(held.has(new Uint8Array(0))).toBe(false);
  });
});
