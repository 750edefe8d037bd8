import { describe, expect, it } from "vitest";
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { ToolResultSchema, ToolRoundRecordSchema, ToolRoundResultSchema, type ToolResult } from "@byok/contracts";
import { ToolRoundState } from "./tool-round.ts";

const call = (callId: string) => ({ callId, name: "Read", argumentsJson: "{}" });
interface RoundInit {
  results?: Array<MessageInitShape<typeof ToolRoundResultSchema>>;
  version?: number;
  headRevisionId?: string;
}
const round = (init: RoundInit = {}) =>
  create(ToolRoundRecordSchema, { runId: "r", roundId: "r:round:1", baseRevisionId: "base", headRevisionId: "base", calls: [call("A"), call("B"), call("C")], version: 1, ...init });
const result = (callId: string): ToolResult => create(ToolResultSchema, { callId, content: `out ${callId}` });

describe("ToolRoundState", () => {
  it("commits results in arrival order and settles when the last call has one", () => {
    const state = new ToolRoundState(round());
    expect(state.untouched).toBe(true);
    const order: string[] = [];
    let version = 1;
    for (const id of ["B", "A", "C"]) {
      const d = state.classify(result(id));
      expect(d.kind).toBe("commit");
      if (d.kind === "commit") order.push(d.call.callId);
      version += 1;
      state.committed(id, { revisionId: `rev-${id}`, version, settled: id === "C", duplicate: false });
    }
    expect(order).toEqual(["B", "A", "C"]);
    expect(state.settled).toBe(true);
    expect(state.tipRevisionId).toBe("rev-C");
    expect(state.version).toBe(4);
    expect(state.pendingCalls()).toEqual([]);
  });

  it("ignores a second result for a call and results for calls outside the round", () => {
    const state = new ToolRoundState(round());
    state.committed("A", { revisionId: "rev-A", version: 2, settled: false, duplicate: false });
    expect(state.classify(result("A")).kind).toBe("duplicate");
    expect(state.classify(result("Z")).kind).toBe("unknown_call");
    expect(state.untouched).toBe(false);
  });

  it("continues a round from the store: committed calls are done, the rest pending in model order", () => {
    const state = new ToolRoundState(
      round({ results: [{ callId: "C", completionSeq: 1, content: "x", revisionId: "rev-C" }], version: 2, headRevisionId: "rev-C" }),
    );
    expect(state.pendingCalls().map((c) => c.callId)).toEqual(["A", "B"]);
    expect(state.classify(result("C")).kind).toBe("duplicate");
    expect(state.tipRevisionId).toBe("rev-C");
    expect(state.untouched).toBe(false);
  });

  it("does not move its tip for a pair another owner committed", () => {
    const state = new ToolRoundState(round());
    state.committed("A", { revisionId: "rev-A", version: 2, settled: false, duplicate: false });
    state.committed("B", { revisionId: "rev-B-old", version: 3, settled: false, duplicate: true });
    expect(state.tipRevisionId).toBe("rev-A");
    expect(state.pendingCalls().map((c) => c.callId)).toEqual(["C"]);
  });
});
