import { describe, expect, it } from "vitest";
import { LoopBatchedWrites } from "./loop-batched-writes.ts";

const nextPass = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe("LoopBatchedWrites", () => {
  it("joins the chunks of one pass into one write, in order, in that pass's check phase", async () => {
    const writes: string[] = [];
    const batched = new LoopBatchedWrites((chunk) => writes.push(chunk.toString()));
    batched.push(Buffer.from("a"));
    batched.push(Buffer.from("b"));
    await Promise.resolve();
    batched.push(Buffer.from("c"));
    expect(writes).toEqual([]);
    await nextPass();
    expect(writes).toEqual(["abc"]);
    batched.push(Buffer.from("d"));
    await nextPass();
    expect(writes).toEqual(["abc", "d"]);
  });

  it("joins chunks pushed by separate callbacks of the same pass (one per immediate here)", async () => {
    const writes: string[] = [];
    const batched = new LoopBatchedWrites((chunk) => writes.push(chunk.toString()));
    // Two immediates queued together run in one check phase; the flush they schedule runs in the next
    // one. (Two zero timers were used here before: under load they can fall into different passes.)
    await new Promise<void>((resolve) => {
      setImmediate(() => batched.push(Buffer.from("1")));
      setImmediate(() => {
        batched.push(Buffer.from("2"));
        resolve();
      });
    });
    await nextPass();
    expect(writes).toEqual(["12"]);
  });

  it("flush() writes at once and leaves nothing for the scheduled pass", async () => {
    const writes: string[] = [];
    const batched = new LoopBatchedWrites((chunk) => writes.push(chunk.toString()));
    batched.push(Buffer.from("x"));
    batched.push(Buffer.from("y"));
    batched.flush();
    expect(writes).toEqual(["xy"]);
    await nextPass();
    expect(writes).toEqual(["xy"]);
  });
});
