import { createHash } from "node:crypto";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { StoreErrorKind } from "@byok/contracts";
import { startTestStore, type TestStore } from "./store-test-harness.ts";

const sha256 = (data: Uint8Array) => createHash("sha256").update(data).digest();

describe("blobs", () => {
  let store: TestStore;
  beforeEach(async () => {
    store = await startTestStore();
  });
  afterEach(() => store.close());

  it("stores content under its SHA-256 and returns only the blobs that exist", async () => {
    const data = new TextEncoder().encode('{"role":"user","content":"hi"}');
    const put = await store.call("putBlob", { data });
    expect(put.error).toBeUndefined();
    expect(Buffer.from(put.id).equals(sha256(data))).toBe(true);
    // Putting the same bytes again is a no-op with the same id.
    expect(Buffer.from((await store.call("putBlob", { data, expectedId: put.id })).id).equals(sha256(data))).toBe(true);

    const missing = sha256(new TextEncoder().encode("never stored"));
    const got = await store.call("getBlobs", { ids: [missing, put.id] });
    expect(got.error).toBeUndefined();
    expect(got.blobs).toHaveLength(1);
    expect(Buffer.from(got.blobs[0]!.data).equals(Buffer.from(data))).toBe(true);
    expect(Buffer.from(got.blobs[0]!.id).equals(sha256(data))).toBe(true);
  });

  it("stores empty and large binary blobs byte for byte", async () => {
    const large = new Uint8Array(600_000).map((_, i) => (i * 31) % 256);
    for (const data of [new Uint8Array(0), large]) {
      const put = await store.call("putBlob", { data });
      const got = await store.call("getBlobs", { ids: [put.id] });
      expect(Buffer.from(got.blobs[0]!.data).equals(Buffer.from(data))).toBe(true);
    }
  });

  it("rejects a put whose claimed id is not the hash of its bytes, and stores nothing", async () => {
    const data = new TextEncoder().encode("real bytes");
    const wrongId = sha256(new TextEncoder().encode("other bytes"));
    const put = await store.call("putBlob", { data, expectedId: wrongId });
    expect(put.error?.kind).toBe(StoreErrorKind.INVALID);
    const count = await store.sql("SELECT count(*)::int AS n FROM blobs");
    expect(count.rows[0].n).toBe(0);
  });

  it("blob.put_many stores several blobs (repeats and stored ones included) and their conversation's refs in one request", async () => {
    const enc = new TextEncoder();
    const [a, b, c] = [enc.encode("root a"), enc.encode("root b"), enc.encode("root c")];
    await store.call("putBlob", { data: a });
    const put = await store.call("putBlobs", { data: [a, b, c, b], conversationId: "conv-1" });
    expect(put.error).toBeUndefined();
    expect(put.ids.map((id) => Buffer.from(id).toString("hex"))).toEqual([a, b, c, b].map((d) => sha256(d).toString("hex")));
    const got = await store.call("getBlobs", { ids: put.ids });
    expect(got.blobs.map((blob) => Buffer.from(blob.data).toString())).toEqual(["root a", "root b", "root c"]);
    const refs = await store.sql("SELECT count(*)::int AS n FROM blob_refs WHERE conversation_id = 'conv-1'");
    expect(refs.rows[0].n).toBe(3);
    expect((await store.call("putBlobs", { data: [] })).ids).toEqual([]);
  });

  it("rejects malformed ids on get", async () => {
    const got = await store.call("getBlobs", { ids: [new Uint8Array([1, 2, 3])] });
    expect(got.error?.kind).toBe(StoreErrorKind.INVALID);
  });

  it("the database itself refuses a blob whose id is not its hash, and refuses rewriting a blob", async () => {
    const data = Buffer.from("content");
    await expect(store.sql("INSERT INTO blobs (id, bytes) VALUES ($1, $2)", [sha256(Buffer.from("x")), data])).rejects.toThrow(/blobs_id_is_sha256/);
    await store.call("putBlob", { data });
    await expect(store.sql("UPDATE blobs SET bytes = $1", [Buffer.from("tampered")])).rejects.toThrow(/append-only/);
  });
});
