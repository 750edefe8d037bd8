import { createHash } from "node:crypto";
import { silentLogger } from "@byok/platform";
import { describe, expect, it } from "vitest";
import { PageStore } from "./page-store.ts";

function memoryStore() {
  const blobs = new Map<string, Uint8Array>();
  return {
    blobs,
    putBlob: (data: Uint8Array) => {
      const id = createHash("sha256").update(data).digest();
      blobs.set(id.toString("hex"), data);
      return Promise.resolve(new Uint8Array(id));
    },
    getBlobs: (ids: readonly Uint8Array[]) =>
      Promise.resolve(new Map(ids.flatMap((id) => {
        const key = Buffer.from(id).toString("hex");
        const data = blobs.get(key);
        return data === undefined ? [] : [[key, data] as const];
      }))),
  };
}

describe("PageStore", () => {
  it("serves a fetched URL from the cache within the TTL, per conversation", async () => {
    const clock = { now: 0 };
    const pages = new PageStore({ store: memoryStore(), ttlMs: 1_000, now: () => clock.now, log: silentLogger() });
    const saved = await pages.save("conv-a", "https://x.example/", { url: "https://x.example/final", title: "X", markdown: "text" });
    expect(saved.contentId).toMatch(/^wp_[A-Za-z0-9_-]{43}$/);
    expect(pages.cached("conv-a", "https://x.example/")).toEqual(saved);
    expect(pages.cached("conv-b", "https://x.example/")).toBeUndefined();
    clock.now = 1_000;
    expect(pages.cached("conv-a", "https://x.example/")).toBeUndefined();
  });

  it("opens a page by content id from the store after a restart, but only in the conversation that fetched it", async () => {
    const store = memoryStore();
    const first = new PageStore({ store, ttlMs: 1_000, now: () => 0, log: silentLogger() });
    const saved = await first.save("conv-a", "https://x.example/", { url: "https://x.example/", title: "", markdown: "long text" });
    const restarted = new PageStore({ store, ttlMs: 1_000, now: () => 0, log: silentLogger() });
    expect(await restarted.load("conv-a", saved.contentId)).toEqual(saved);
    expect(await restarted.load("conv-b", saved.contentId)).toBeUndefined();
    expect(await first.load("conv-b", saved.contentId)).toBeUndefined();
    expect(await restarted.load("conv-a", "wp_nonsense")).toBeUndefined();
    // Any other blob of the store is not a page.
    const other = Buffer.from(await store.putBlob(new TextEncoder().encode('{"role":"user"}'))).toString("base64url");
    expect(await restarted.load("conv-a", `wp_${other}`)).toBeUndefined();
  });
});
