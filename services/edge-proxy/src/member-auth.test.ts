import { describe, expect, it } from "vitest";
import { MemberAuthenticator, keyFromProxyAuthorization } from "./member-auth.ts";
import type { MemberDirectory, MemberLookup } from "./member-store.ts";

const basic = (s: string): string => `Basic ${Buffer.from(s).toString("base64")}`;

/** In-memory member directory (the store's member.verify in production). */
class MemoryDirectory implements MemberDirectory {
  readonly keys = new Map<string, string>();
  calls = 0;
  down = false;
  async verifyKey(key: string): Promise<MemberLookup> {
    this.calls++;
    if (this.down) return { kind: "unavailable", message: "no responders" };
    const memberId = this.keys.get(key);
    return memberId === undefined ? { kind: "unknown" } : { kind: "member", memberId };
  }
}

describe("keyFromProxyAuthorization", () => {
  it("reads the key from Basic (password, or user alone) and Bearer credentials", () => {
    expect(keyFromProxyAuthorization(basic("alice:k-123"))).toBe("k-123");
    expect(keyFromProxyAuthorization(basic("k-123:"))).toBe("k-123");
    expect(keyFromProxyAuthorization(basic("k-123"))).toBe("k-123");
    expect(keyFromProxyAuthorization(basic("alice:k%2F1"))).toBe("k/1");
    expect(keyFromProxyAuthorization("Bearer k-123")).toBe("k-123");
    expect(keyFromProxyAuthorization(undefined)).toBeUndefined();
    expect(keyFromProxyAuthorization("Digest abc")).toBeUndefined();
    expect(keyFromProxyAuthorization(basic(":"))).toBeUndefined();
  });
});

describe("MemberAuthenticator", () => {
  it("accepts known keys, rejects unknown and missing ones", async () => {
    const dir = new MemoryDirectory();
    dir.keys.set("good", "m-alice");
    const auth = new MemberAuthenticator(dir, { cacheMs: 1_000 });
    expect(await auth.authenticate(basic("alice:good"))).toEqual({ kind: "ok", memberId: "m-alice" });
    expect(await auth.authenticate(basic("alice:bad"))).toEqual({ kind: "rejected" });
    expect(await auth.authenticate(undefined)).toEqual({ kind: "missing" });
  });

  it("caches verdicts for a while, so a revoked key stops working after the cache time", async () => {
    const dir = new MemoryDirectory();
    dir.keys.set("good", "m-alice");
    const auth = new MemberAuthenticator(dir, { cacheMs: 1_000 });
    await auth.authenticate("Bearer good", 0);
    await auth.authenticate("Bearer good", 500);
    expect(dir.calls).toBe(1);
    dir.keys.delete("good");
    expect(await auth.authenticate("Bearer good", 999)).toEqual({ kind: "ok", memberId: "m-alice" });
    expect(await auth.authenticate("Bearer good", 1_001)).toEqual({ kind: "rejected" });
  });

  it("reports an unreachable store and does not cache it", async () => {
    const dir = new MemoryDirectory();
    dir.keys.set("good", "m-alice");
    dir.down = true;
    const auth = new MemberAuthenticator(dir, { cacheMs: 1_000 });
    expect(await auth.authenticate("Bearer good", 0)).toMatchObject({ kind: "unavailable" });
    dir.down = false;
    expect(await auth.authenticate("Bearer good", 1)).toEqual({ kind: "ok", memberId: "m-alice" });
  });
});
