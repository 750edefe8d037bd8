import { describe, expect, it } from "vitest";
import { EndOfPass } from "./end-of-pass.ts";

const nextPass = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe("EndOfPass", () => {
  it("runs the work queued in one pass together after it, each once, and not what was cancelled", async () => {
    const endOfPass = new EndOfPass();
    const ran: string[] = [];
    const a = (): void => void ran.push("a");
    const b = (): void => void ran.push("b");
    const c = (): void => void ran.push("c");
    endOfPass.queue(a);
    endOfPass.queue(b);
    endOfPass.queue(a);
    endOfPass.queue(c);
    endOfPass.cancel(b);
    expect(ran).toEqual([]);
    await nextPass();
    expect(ran).toEqual(["a", "c"]);
    // Queued again in a later pass, it runs again.
    endOfPass.queue(b);
    await nextPass();
    expect(ran).toEqual(["a", "c", "b"]);
  });
});
