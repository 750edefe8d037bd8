import { describe, expect, it } from "vitest";
import { ExecIdRegistry } from "./exec-ids.ts";

describe("ExecIdRegistry", () => {
  it("hands out increasing ids from 1 and maps them back to the call", () => {
    const ids = new ExecIdRegistry();
    expect(ids.allocate("call_a")).toBe(1);
    expect(ids.allocate("call_b\nfc_1")).toBe(2);
    expect(ids.allocate("call_a")).toBe(3);
    expect(ids.lookup(2)).toEqual({ kind: "active", callId: "call_b\nfc_1" });
    expect(ids.running()).toEqual([1, 2, 3]);
  });

  it("reports empty (0/absent) and unknown ids as protocol errors", () => {
    const ids = new ExecIdRegistry();
    ids.allocate("call_a");
    expect(ids.lookup(0)).toEqual({ kind: "protocol_error", message: "exec message without an id" });
    expect(ids.lookup(undefined).kind).toBe("protocol_error");
    expect(ids.lookup(7)).toEqual({ kind: "protocol_error", message: "unknown exec id 7" });
    expect(ids.close(0).kind).toBe("protocol_error");
    expect(ids.close(9).kind).toBe("protocol_error");
  });

  it("treats a second terminal result or a second close as a protocol error", () => {
    const ids = new ExecIdRegistry();
    const id = ids.allocate("call_a");
    ids.settle(id);
    expect(ids.lookup(id)).toEqual({ kind: "protocol_error", message: "exec 1 answered again after its terminal result" });
    expect(ids.close(id)).toEqual({ kind: "closed", callId: "call_a" });
    expect(ids.close(id)).toEqual({ kind: "protocol_error", message: "exec 1 closed twice" });
    expect(ids.lookup(id).kind).toBe("protocol_error");
  });

  it("reports a close before any terminal result", () => {
    const ids = new ExecIdRegistry();
    const id = ids.allocate("call_a");
    expect(ids.close(id)).toEqual({ kind: "closed_without_result", callId: "call_a" });
    expect(ids.running()).toEqual([]);
  });

  it("aborts only running ids and ignores their late messages", () => {
    const ids = new ExecIdRegistry();
    const done = ids.allocate("call_a");
    const open = ids.allocate("call_b");
    ids.settle(done);
    expect(ids.abortRunning()).toEqual([open]);
    expect(ids.lookup(open)).toEqual({ kind: "late", callId: "call_b" });
    expect(ids.close(open)).toEqual({ kind: "late", callId: "call_b" });
    expect(ids.running()).toEqual([]);
    expect(ids.abortRunning()).toEqual([]);
  });

  it("names the message family in errors", () => {
    const queries = new ExecIdRegistry("interaction query");
    expect(queries.lookup(3)).toEqual({ kind: "protocol_error", message: "unknown interaction query id 3" });
  });
});
