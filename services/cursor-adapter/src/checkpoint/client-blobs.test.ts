import { describe, expect, it } from "vitest";
import { ClientBlobs } from "./client-blobs.ts";
import { blobKey } from "./blob-id.ts";
import { kvTestClient } from "./test-client.ts";

const setBlobIds = (client: ReturnType<typeof kvTestClient>): string[] =>
  client.frames.flatMap((f) => (f.message.case === "kvServerMessage" && f.message.value.message.case === "setBlobArgs" ? [blobKey(f.message.value.message.value.blobId)] : []));

describe("ClientBlobs", () => {
  it("SETs a blob as it is put when no gate is given", () => {
    const client = kvTestClient();
    const blobs = new ClientBlobs(client.kv);
    const id = blobs.put(Uint8Array.of(1, 2, 3));
    expect(setBlobIds(client)).toEqual([blobKey(id)]);
  });

  it("holds SETs until the gate opens, then sends them in the order they were put, and their ACKs complete the barrier", async () => {
    const client = kvTestClient();
    let open!: () => void;
    const blobs = new ClientBlobs(client.kv, new Promise<void>((resolve) => (open = resolve)));
    const a = blobs.put(Uint8Array.of(1));
    const b = blobs.put(Uint8Array.of(2));
    let acked = false;
    const barrier = blobs.whenAcked([a, b]).then(() => (acked = true));
    await Promise.resolve();
    expect(setBlobIds(client)).toEqual([]);

    open();
    await new Promise((resolve) => setImmediate(resolve));
    const c = blobs.put(Uint8Array.of(3));
    expect(setBlobIds(client)).toEqual([blobKey(a), blobKey(b), blobKey(c)]);
    expect(acked).toBe(false);
    expect(client.ackAllSets()).toBe(3);
    await barrier;
    expect(acked).toBe(true);
    expect(() => blobs.assertAcked([a, b])).not.toThrow();
  });
});
