import { describe, expect, it } from "vitest";
import { RootSaves } from "./root-saves.ts";

describe("RootSaves", () => {
  it("sends the roots added in one tick as one batch, later ones as the next", async () => {
    const batches: number[][] = [];
    const saves = new RootSaves(async (blobs) => {
      batches.push(blobs.map((b) => b[0]!));
    });
    const first = [saves.add(Uint8Array.of(1)), saves.add(Uint8Array.of(2)), saves.add(Uint8Array.of(3))];
    await Promise.all(first);
    await saves.add(Uint8Array.of(4));
    expect(batches).toEqual([[1, 2, 3], [4]]);
  });

  it("saves nothing before its gate opens, then what was added until then as one batch", async () => {
    const batches: number[][] = [];
    let open!: () => void;
    const saves = new RootSaves(
      async (blobs) => {
        batches.push(blobs.map((b) => b[0]!));
      },
      new Promise<void>((resolve) => (open = resolve)),
    );
    const first = saves.add(Uint8Array.of(1));
    await new Promise((resolve) => setImmediate(resolve));
    const second = saves.add(Uint8Array.of(2));
    await new Promise((resolve) => setImmediate(resolve));
    expect(batches).toEqual([]);
    open();
    await Promise.all([first, second]);
    expect(batches).toEqual([[1, 2]]);
  });

  it("settles every root of a batch with the batch's outcome", async () => {
    const saves = new RootSaves(() => Promise.reject(new Error("store down")));
    const results = await Promise.allSettled([saves.add(Uint8Array.of(1)), saves.add(Uint8Array.of(2))]);
    expect(results.map((r) => r.status)).toEqual(["rejected", "rejected"]);
  });
});
