/**
 * TodoWrite runs in the gateway: it computes the conversation's new todo list
 * (merge or replace) and reports it as an effect; the session stores it in
 * the checkpoint's `todos` and emits started + completed back to back.
 */
import { create } from "@bufbuild/protobuf";
import { tools } from "@byok/cursor-protocol";
import { startedCard, toolOutcome } from "./cards.ts";
import { ArgReader, isJsonObject, type ToolArgs } from "./tool-args.ts";
import type { ToolCallInput, ToolPlan, ToolPlanContext, ToolVariant } from "./types.ts";

const STATUS_BY_NAME: Record<string, tools.TodoStatus> = {
  pending: tools.TodoStatus.PENDING,
  in_progress: tools.TodoStatus.IN_PROGRESS,
  completed: tools.TodoStatus.COMPLETED,
  cancelled: tools.TodoStatus.CANCELLED,
};

/** One item as the model sent it; absent fields keep their old value when merging. */
export interface TodoUpdate {
  id: string;
  content?: string;
  status?: tools.TodoStatus;
}

export type TodoMerge = { kind: "ok"; todos: tools.TodoItem[] } | { kind: "invalid"; error: string };

/**
 * merge=false: the list becomes exactly `updates` (created_at kept for ids that existed).
 * merge=true: existing ids are updated in place, new ids appended in the given order.
 */
export function mergeTodos(current: readonly tools.TodoItem[], updates: readonly TodoUpdate[], merge: boolean, nowMs: number): TodoMerge {
  const now = BigInt(Math.max(0, Math.trunc(nowMs)));
  const byId = new Map(current.map((t) => [t.id, t]));
  const fresh = (u: TodoUpdate): tools.TodoItem | string => {
    if (u.content === undefined || u.content.trim() === "") return `todo ${JSON.stringify(u.id)} needs content`;
    return create(tools.TodoItemSchema, {
      id: u.id,
      content: u.content,
      status: u.status ?? tools.TodoStatus.PENDING,
      createdAt: byId.get(u.id)?.createdAt ?? now,
      updatedAt: now,
      dependencies: byId.get(u.id)?.dependencies ?? [],
    });
  };
  if (!merge) {
    const todos: tools.TodoItem[] = [];
    for (const u of updates) {
      const item = fresh(u);
      if (typeof item === "string") return { kind: "invalid", error: item };
      todos.push(item);
    }
    return { kind: "ok", todos };
  }
  const todos = current.map((t) => create(tools.TodoItemSchema, t));
  for (const u of updates) {
    const index = todos.findIndex((t) => t.id === u.id);
    const existing = todos[index];
    if (existing === undefined) {
      const item = fresh(u);
      if (typeof item === "string") return { kind: "invalid", error: item };
      todos.push(item);
      continue;
    }
    const content = u.content !== undefined && u.content.trim() !== "" ? u.content : existing.content;
    const status = u.status ?? existing.status;
    if (content !== existing.content || status !== existing.status) {
      todos[index] = create(tools.TodoItemSchema, { ...existing, content, status, updatedAt: now });
    }
  }
  return { kind: "ok", todos };
}

export function planTodoWrite(call: ToolCallInput, args: ToolArgs, ctx: ToolPlanContext): ToolPlan {
  const reader = new ArgReader("TodoWrite", args);
  const merge = reader.optionalBoolean("merge") ?? false;
  const rawTodos = reader.optionalArray("todos");
  if (rawTodos === undefined) reader.problem(`"todos" is required`);
  const updates = (rawTodos ?? []).flatMap((raw, i) => readUpdate(raw, i, reader));
  const ids = updates.map((u) => u.id);
  if (new Set(ids).size !== ids.length) reader.problem("todo ids must be unique");
  const todoArgs = create(tools.UpdateTodosArgsSchema, {
    merge,
    todos: updates.map((u) => ({ id: u.id, content: u.content ?? "", status: u.status ?? tools.TodoStatus.UNSPECIFIED })),
  });
  const merged = reader.error() === undefined ? mergeTodos(ctx.todos, updates, merge, ctx.now()) : undefined;
  const error = reader.error() ?? (merged?.kind === "invalid" ? `Invalid arguments for TodoWrite: ${merged.error}.` : undefined);
  const started = startedCard(call.callId, todosVariant(todoArgs), ctx);
  if (error !== undefined || merged === undefined || merged.kind !== "ok") {
    const message = error ?? "Invalid arguments for TodoWrite.";
    const result = create(tools.UpdateTodosResultSchema, { result: { case: "error", value: { error: message } } });
    return { kind: "invalid", error: message, started, outcome: toolOutcome(call.callId, todosVariant(todoArgs, result), ctx, message, true) };
  }
  const todos = merged.todos;
  return {
    kind: "server",
    started,
    delayMs: 0,
    complete: () => {
      const result = create(tools.UpdateTodosResultSchema, {
        result: { case: "success", value: { todos, totalCount: todos.length, wasMerge: merge } },
      });
      return toolOutcome(call.callId, todosVariant(todoArgs, result), ctx, todosText(todos), false, [{ kind: "todos", todos }]);
    },
  };
}

function readUpdate(raw: unknown, index: number, reader: ArgReader): TodoUpdate[] {
  const at = `todos[${index}]`;
  if (!isJsonObject(raw)) {
    reader.problem(`${at} must be an object`);
    return [];
  }
  const id = typeof raw["id"] === "string" ? raw["id"].trim() : typeof raw["id"] === "number" ? String(raw["id"]) : "";
  if (id === "") {
    reader.problem(`${at}.id must be a non-empty string`);
    return [];
  }
  const update: TodoUpdate = { id };
  if (raw["content"] !== undefined) {
    if (typeof raw["content"] === "string") update.content = raw["content"];
    else reader.problem(`${at}.content must be a string`);
  }
  if (raw["status"] !== undefined) {
    const name = typeof raw["status"] === "string" ? raw["status"].trim().toLowerCase().replace(/[\s-]/g, "_") : "";
    const status = STATUS_BY_NAME[name === "canceled" ? "cancelled" : name];
    if (status === undefined) reader.problem(`${at}.status must be one of pending, in_progress, completed, cancelled`);
    else update.status = status;
  }
  return [update];
}

function todosVariant(args: tools.UpdateTodosArgs, result?: tools.UpdateTodosResult): ToolVariant {
  return { case: "updateTodosToolCall", value: create(tools.UpdateTodosToolCallSchema, { args, ...(result === undefined ? {} : { result }) }) };
}

const MARKS: Record<number, string> = {
  [tools.TodoStatus.PENDING]: "[ ]",
  [tools.TodoStatus.IN_PROGRESS]: "[~]",
  [tools.TodoStatus.COMPLETED]: "[x]",
  [tools.TodoStatus.CANCELLED]: "[-]",
};

/** The updated list as the model sees it. */
export function todosText(todos: readonly tools.TodoItem[]): string {
  if (todos.length === 0) return "The todo list is now empty.";
  const lines = todos.map((t) => `${MARKS[t.status] ?? "[ ]"} ${t.content} (id: ${t.id}, ${statusName(t.status)})`);
  return [`Todo list updated (${todos.length} items):`, ...lines].join("\n");
}

function statusName(status: tools.TodoStatus): string {
  return Object.entries(STATUS_BY_NAME).find(([, s]) => s === status)?.[0] ?? "pending";
}
