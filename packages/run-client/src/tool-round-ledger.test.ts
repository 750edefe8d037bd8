import { describe, expect, it } from "vitest";
import { create } from "@bufbuild/protobuf";
import { ToolCallPartSchema } from "@byok/contracts";
import type { ToolResultInit } from "./run-bus.ts";
import { ToolRoundLedger } from "./tool-round-ledger.ts";

const call = (callId: string) => create(ToolCallPartSchema, { callId, name: "read", argumentsJson: "{}" });

describe("tool round ledger", () => {
  it("dispatches only calls not started yet when a new owner repeats the round", () => {
    const ledger = new ToolRoundLedger<{ at: number }, string>({ publishResult: async () => undefined, publishFailed: () => undefined, ended: () => false });
    const round = ledger.round("r:round:1", [call("a"), call("b")], () => ({ at: 1 }));
    expect(ledger.dispatch("r:round:1", round.calls).map((c) => c.callId)).toEqual(["a", "b"]);
    // The new owner re-sends the call without a committed result.
    expect(ledger.dispatch("r:round:1", [call("b")])).toEqual([]);
    // A round is recorded on its first mention only.
    expect(ledger.round("r:round:1", [], () => ({ at: 2 })).info).toEqual({ at: 1 });
  });

  it("publishes each finished call once, in the order the calls finished", async () => {
    const published: string[] = [];
    const ledger = new ToolRoundLedger<undefined, string>({
      publishResult: async (r: ToolResultInit) => void published.push(r.callId),
      publishFailed: () => undefined,
      ended: () => false,
    });
    ledger.round("r:round:1", [call("a"), call("b")], () => undefined);
    for (const id of ["b", "a", "b"]) {
      if (ledger.finish("r:round:1", id, `out-${id}`)) ledger.publish({ callId: id, content: `out-${id}`, isError: false });
    }
    await ledger.published();
    expect(published).toEqual(["b", "a"]);
    expect(ledger.get("r:round:1")?.outcomes.get("a")).toBe("out-a");
  });

  it("reports a result the bus does not take and publishes nothing after the session ended", async () => {
    let ended = false;
    const failures: unknown[] = [];
    const ledger = new ToolRoundLedger<undefined, string>({
      publishResult: async () => {
        throw new Error("no stream");
      },
      publishFailed: (error) => failures.push(error),
      ended: () => ended,
    });
    ledger.round("r:round:1", [call("a"), call("b")], () => undefined);
    if (ledger.finish("r:round:1", "a", "x")) ledger.publish({ callId: "a", content: "x", isError: false });
    await ledger.published();
    expect(failures).toHaveLength(1);
    ended = true;
    expect(ledger.finish("r:round:1", "b", "y")).toBe(false);
  });
});
