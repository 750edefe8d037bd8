import { afterEach, describe, expect, it, vi } from "vitest";
import { blobIdOf } from "./blob-id.ts";
import { KvError } from "./kv-channel.ts";
import { kvTestClient } from "./test-client.ts";

const bytes = new TextEncoder().encode('{"role":"system","content":"You are a test."}');
const id = blobIdOf(bytes);

afterEach(() => {
  vi.useRealTimers();
});

describe("KV channel", () => {
  it("numbers requests from 0 and resolves a SET on its acknowledgement", async () => {
    const client = kvTestClient();
    const first = client.kv.set(id, bytes);
    const second = client.kv.set(blobIdOf(new Uint8Array([1])), new Uint8Array([1]));
    const requests = client.openRequests();
    expect(requests.map((r) => r.id)).toEqual([0, 1]);
    expect(requests[0]!.message).toMatchObject({ case: "setBlobArgs", value: { blobId: id, blobData: bytes } });
    // Blob id of the documented test vector (cursor-agent-protocol §13).
    expect(Buffer.from(id).toString("base64")).toBe("+HHq/TC/kp9OJGUQzhpjFt1Z4XuNe19Q42Lhkt0blxg=");

    client.ackSet(1);
    await second;
    let firstDone = false;
    void first.then(() => (firstDone = true));
    await Promise.resolve();
    expect(firstDone).toBe(false);
    client.ackSet(0);
    await first;
    expect(client.kv.pendingCount).toBe(0);
  });

  it("reports how each request ended, for the round-trip metrics", async () => {
    const ended: string[] = [];
    const client = kvTestClient({ getTimeoutMs: 30, onRoundTrip: (op, outcome, sentAt) => ended.push(`${op}:${outcome}:${sentAt <= performance.now()}`) });
    const set = client.kv.set(id, bytes);
    client.ackSet(0);
    await set;
    await expect(client.kv.get(id)).rejects.toMatchObject({ kind: "timeout" });
    const refused = client.kv.get(id);
    client.answerGet(2, { error: "gone" });
    await expect(refused).rejects.toMatchObject({ kind: "client_error" });
    const pending = client.kv.set(id, bytes);
    client.kv.close("run ended");
    await expect(pending).rejects.toMatchObject({ kind: "closed" });
    await Promise.resolve();
    expect(ended).toEqual(["set:ok:true", "get:timeout:true", "get:client_error:true", "set:closed:true"]);
  });

  it("fails a SET the client refuses or does not answer in time", async () => {
    vi.useFakeTimers();
    const client = kvTestClient({ setTimeoutMs: 30_000 });
    const refused = client.kv.set(id, bytes);
    client.ackSet(0, "disk full");
    await expect(refused).rejects.toMatchObject({ kind: "client_error" });

    const unanswered = client.kv.set(id, bytes);
    const outcome = unanswered.then(
      () => "resolved",
      (err: unknown) => err,
    );
    await vi.advanceTimersByTimeAsync(29_999);
    expect(client.kv.pendingCount).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(await outcome).toMatchObject({ kind: "timeout" });
    // A late answer for the timed-out id is ignored.
    client.ackSet(1);
    expect(client.kv.pendingCount).toBe(0);
  });

  it("fails each request at its own deadline, however many are pending and whatever their timeouts", async () => {
    vi.useFakeTimers();
    const client = kvTestClient({ setTimeoutMs: 1_000, getTimeoutMs: 10_000 });
    const settled = new Map<string, string>();
    const track = (name: string, request: Promise<unknown>): void => {
      request.then(
        () => settled.set(name, "ok"),
        (err: unknown) => settled.set(name, (err as KvError).kind),
      );
    };
    track("get 0", client.kv.get(id));
    await vi.advanceTimersByTimeAsync(2_000);
    // Sent later with a shorter timeout: due before the GET already waiting.
    track("set 1", client.kv.set(id, bytes));
    track("get 2", client.kv.get(id));
    await vi.advanceTimersByTimeAsync(999);
    expect(settled.size).toBe(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(settled).toEqual(new Map([["set 1", "timeout"]]));
    // The GET sent first still waits for its own deadline (10 s after it was sent), the second for its own.
    await vi.advanceTimersByTimeAsync(6_999);
    expect(settled.has("get 0")).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(settled.get("get 0")).toBe("timeout");
    client.answerGet(2, bytes);
    await vi.advanceTimersByTimeAsync(0);
    expect(settled.get("get 2")).toBe("ok");
    // Nothing pending: no timer left behind.
    expect(client.kv.pendingCount).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("checks GET answers against the blob id", async () => {
    const client = kvTestClient();
    const good = client.kv.get(id);
    const bad = client.kv.get(id);
    const missing = client.kv.get(id);
    client.answerGet(0, bytes);
    client.answerGet(1, new Uint8Array([1, 2, 3]));
    client.answerGet(2, { error: "not found" });
    await expect(good).resolves.toEqual(bytes);
    await expect(bad).rejects.toMatchObject({ kind: "hash_mismatch" });
    await expect(missing).rejects.toMatchObject({ kind: "client_error" });
  });

  it("ignores results for unknown ids and of the wrong kind", async () => {
    const client = kvTestClient();
    const pending = client.kv.get(id);
    client.ackSet(0); // a SET result for a GET request
    client.answerGet(41, bytes);
    expect(client.kv.pendingCount).toBe(1);
    client.answerGet(0, bytes);
    await expect(pending).resolves.toEqual(bytes);
  });

  it("fails pending requests on close and refuses new ones", async () => {
    const client = kvTestClient();
    const pending = client.kv.set(id, bytes);
    client.kv.close("run ended");
    await expect(pending).rejects.toBeInstanceOf(KvError);
    await expect(client.kv.get(id)).rejects.toMatchObject({ kind: "closed" });
  });
});
