import { create } from "@bufbuild/protobuf";
import { agent } from "@byok/cursor-protocol";
import { afterEach, describe, expect, it, vi } from "vitest";
import { BufferedServerStream, type ReadResult } from "./buffered-server-stream.ts";

const IDLE_MS = 5_000;
const message = create(agent.AgentServerMessageSchema, {});

/** The read's result once it settles, or "pending". */
function watch(read: Promise<ReadResult>): () => string {
  let state = "pending";
  void read.then((result) => (state = result.kind));
  return () => state;
}

afterEach(() => {
  vi.useRealTimers();
});

describe("BufferedServerStream", () => {
  it("hands out what was written before the read, then waits for the next write", async () => {
    const stream = new BufferedServerStream();
    const signal = new AbortController().signal;
    stream.send(message);
    expect((await stream.next(IDLE_MS, signal)).kind).toBe("message");
    const read = stream.next(IDLE_MS, signal);
    stream.send(message);
    expect((await read).kind).toBe("message");
  });

  it("ends a read as idle once it waited the idle time, counted from its own start", async () => {
    vi.useFakeTimers();
    const stream = new BufferedServerStream();
    const signal = new AbortController().signal;
    // A read answered early leaves the stream's timer armed for its own start.
    const first = stream.next(IDLE_MS, signal);
    await vi.advanceTimersByTimeAsync(3_000);
    stream.send(message);
    expect((await first).kind).toBe("message");

    const second = watch(stream.next(IDLE_MS, signal));
    // The first read's idle time is over here; the second has waited 2 s of its 5.
    await vi.advanceTimersByTimeAsync(2_000);
    expect(second()).toBe("pending");
    await vi.advanceTimersByTimeAsync(2_999);
    expect(second()).toBe("pending");
    await vi.advanceTimersByTimeAsync(1);
    expect(second()).toBe("idle");
  });

  it("ends a waiting read as aborted when the reader goes away", async () => {
    const stream = new BufferedServerStream();
    const controller = new AbortController();
    const read = stream.next(IDLE_MS, controller.signal);
    controller.abort();
    expect((await read).kind).toBe("aborted");
    expect((await stream.next(IDLE_MS, controller.signal)).kind).toBe("aborted");
  });

  it("delivers the end after what was queued before it, and leaves no timer behind", async () => {
    vi.useFakeTimers();
    const ended: string[] = [];
    const stream = new BufferedServerStream((outcome) => ended.push(outcome.kind));
    const signal = new AbortController().signal;
    const waiting = stream.next(IDLE_MS, signal);
    stream.send(message);
    expect((await waiting).kind).toBe("message");
    stream.send(message);
    stream.end({ kind: "ok" });
    stream.send(message);
    expect(ended).toEqual(["ok"]);
    expect(vi.getTimerCount()).toBe(0);
    expect((await stream.next(IDLE_MS, signal)).kind).toBe("message");
    expect((await stream.next(IDLE_MS, signal)).kind).toBe("end");
  });
});
