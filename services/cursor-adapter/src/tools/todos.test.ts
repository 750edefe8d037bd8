import { create } from "@bufbuild/protobuf";
import { tools } from "@byok/cursor-protocol";
import { describe, expect, it } from "vitest";
import { planToolCall } from "./plan-tool-call.ts";
import { mergeTodos } from "./todos.ts";
import { invalidOf, testContext, variantOf } from "./tool-test-support.ts";

const { PENDING, IN_PROGRESS, COMPLETED } = tools.TodoStatus;

const existing = [
  create(tools.TodoItemSchema, { id: "1", content: "Read code", status: COMPLETED, createdAt: 100n, updatedAt: 100n }),
  create(tools.TodoItemSchema, { id: "2", content: "Fix bug", status: IN_PROGRESS, createdAt: 100n, updatedAt: 150n }),
];

describe("mergeTodos", () => {
  it("merge=true updates given ids in place (only given fields) and appends new ids", () => {
    const r = mergeTodos(existing, [{ id: "2", status: COMPLETED }, { id: "3", content: "Write tests" }], true, 500);
    if (r.kind !== "ok") throw new Error(r.error);
    expect(r.todos.map((t) => [t.id, t.content, t.status, t.createdAt, t.updatedAt])).toEqual([
      ["1", "Read code", COMPLETED, 100n, 100n],
      ["2", "Fix bug", COMPLETED, 100n, 500n],
      ["3", "Write tests", PENDING, 500n, 500n],
    ]);
  });

  it("merge=false replaces the list and keeps created_at of surviving ids", () => {
    const r = mergeTodos(existing, [{ id: "2", content: "Fix bug properly", status: IN_PROGRESS }], false, 500);
    if (r.kind !== "ok") throw new Error(r.error);
    expect(r.todos.map((t) => [t.id, t.content, t.createdAt])).toEqual([["2", "Fix bug properly", 100n]]);
  });

  it("needs content for a new item", () => {
    expect(mergeTodos(existing, [{ id: "9", status: PENDING }], true, 1).kind).toBe("invalid");
  });
});

describe("TodoWrite", () => {
  it("runs in the gateway and returns the new list as an effect and a typed card", async () => {
    const ctx = testContext({ todos: existing });
    const plan = planToolCall(
      { callId: "call_t", name: "TodoWrite", argumentsJson: JSON.stringify({ merge: true, todos: [{ id: "2", status: "completed" }, { id: "3", content: "Ship", status: "in-progress" }] }) },
      ctx,
    );
    if (plan.kind !== "server") throw new Error(plan.kind);
    expect(plan.delayMs).toBe(0);
    const outcome = await plan.complete();
    expect(outcome.content).toBe(
      "Todo list updated (3 items):\n[x] Read code (id: 1, completed)\n[x] Fix bug (id: 2, completed)\n[~] Ship (id: 3, in_progress)",
    );
    const effect = outcome.effects[0];
    if (effect?.kind !== "todos") throw new Error("no todos effect");
    expect(effect.todos.map((t) => t.id)).toEqual(["1", "2", "3"]);
    const card = variantOf(outcome.toolCall, "updateTodosToolCall");
    expect(card.args).toMatchObject({ merge: true, todos: [{ id: "2", status: COMPLETED }, { id: "3", content: "Ship", status: IN_PROGRESS }] });
    expect(card.result?.result).toMatchObject({ case: "success", value: { totalCount: 3, wasMerge: true } });
  });

  it("rejects unknown statuses and duplicate ids", () => {
    const bad = (todos: object[]) =>
      invalidOf(planToolCall({ callId: "c", name: "TodoWrite", argumentsJson: JSON.stringify({ merge: false, todos }) }, testContext()));
    expect(bad([{ id: "1", content: "x", status: "done" }]).error).toMatch(/status must be one of/);
    expect(bad([{ id: "1", content: "x" }, { id: "1", content: "y" }]).error).toMatch(/ids must be unique/);
  });
});
