import { describe, expect, it } from "vitest";
import { cachedMemberKeys, type MemberKeys } from "./member-keys.ts";

describe("cachedMemberKeys", () => {
  it("asks once per key within the cache time, again after it, and never remembers unknown keys", async () => {
    let now = 1_000;
    const asked: string[] = [];
    const inner: MemberKeys = {
      verify: async (key) => {
        asked.push(key);
        return key === "good" ? { kind: "member", memberId: "m1" } : { kind: "unknown" };
      },
    };
    const keys = cachedMemberKeys(inner, 30_000, () => now);
    expect(await keys.verify("good")).toEqual({ kind: "member", memberId: "m1" });
    now += 29_999;
    expect(await keys.verify("good")).toEqual({ kind: "member", memberId: "m1" });
    expect(asked).toEqual(["good"]);
    now += 2;
    await keys.verify("good");
    expect(await keys.verify("bad")).toEqual({ kind: "unknown" });
    expect(await keys.verify("bad")).toEqual({ kind: "unknown" });
    expect(asked).toEqual(["good", "good", "bad", "bad"]);
  });
});
