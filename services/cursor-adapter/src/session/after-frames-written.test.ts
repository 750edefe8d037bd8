import { describe, expect, it } from "vitest";
import { LoopBatchedWrites } from "../connect/loop-batched-writes.ts";
import { afterFramesWritten } from "./after-frames-written.ts";

describe("afterFramesWritten", () => {
  it("runs after the RunSSE writer flushed the frames of the same pass, even when queued before them", async () => {
    const order: string[] = [];
    const writes = new LoopBatchedWrites((chunk) => order.push(`write ${chunk.toString()}`));
    await new Promise<void>((resolve) => {
      afterFramesWritten(() => {
        order.push("work");
        resolve();
      });
      // The frames of this pass reach the writer a few promise jobs later, as the RunSSE loop's do.
      void Promise.resolve()
        .then(() => undefined)
        .then(() => writes.push(Buffer.from("text")));
    });
    expect(order).toEqual(["write text", "work"]);
  });

  it("runs what one pass queued in one go, in order, before the promise jobs it starts", async () => {
    const order: string[] = [];
    let opened!: () => void;
    const firstOutput = new Promise<void>((resolve) => (opened = resolve));
    void firstOutput.then(() => order.push("job started by the first work"));
    await new Promise<void>((resolve) => {
      afterFramesWritten(() => {
        order.push("first");
        opened();
      });
      afterFramesWritten(() => {
        order.push("second");
        setImmediate(resolve);
      });
    });
    expect(order).toEqual(["first", "second", "job started by the first work"]);
  });
});
