/**
 * End to end: tools that are not a client exec. AskQuestion asks the user
 * through an interaction query whose answer is the tool result; TodoWrite runs
 * in the gateway (started and completed back to back) and lands in the
 * checkpoint's `todos`, from where the next turn merges into it.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { fromBinary } from "@bufbuild/protobuf";
import { tools } from "@byok/cursor-protocol";
import type { QueryContext } from "@byok/test-support/fake-cursor";
import { startGateway, type GatewayHarness } from "@byok/test-support/gateway-harness";
import { afterLastUser, chatMessages, textOf } from "@byok/test-support/chat-requests";
import { completedCard, enqueueChat, finishedOk, toolUpdates } from "./tools-support.ts";

describe("interaction and server-side tools end to end", () => {
  let gw: GatewayHarness;
  beforeEach(async () => {
    gw = await startGateway();
  });
  afterEach(async () => {
    await gw.stop();
  });

  it("AskQuestion's answer is the tool result; TodoWrite updates the checkpoint's todos and the next turn merges into them", async () => {
    enqueueChat(gw, {
      id: "chatcmpl-ask-1",
      calls: [
        {
          id: "call_ask",
          name: "AskQuestion",
          args: { title: "Setup", questions: [{ id: "db", prompt: "Which database?", options: [{ id: "pg", label: "Postgres" }, { id: "my", label: "MySQL" }] }] },
        },
        {
          id: "call_todo_1",
          name: "TodoWrite",
          args: { merge: false, todos: [{ id: "setup", content: "Set up the database", status: "in_progress" }, { id: "tests", content: "Write tests", status: "pending" }] },
        },
      ],
    });
    enqueueChat(gw, { id: "chatcmpl-ask-2", text: "Postgres it is." });

    const queries: QueryContext[] = [];
    const chat = gw.client().conversation();
    const first = await finishedOk(
      chat.send("Plan the setup.", {
        modelId: gw.modelId,
        onQuery: async (ctx) => {
          queries.push(ctx);
          await ctx.respond({
            result: { case: "askQuestionInteractionResponse", value: { result: { result: { case: "success", value: { answers: [{ questionId: "db", selectedOptionIds: ["pg"] }] } } } } },
          });
        },
      }),
    );
    expect(first.violations, first.describe()).toEqual([]);

    // One interaction query, after the card started, carrying the questions and the call id.
    expect(queries).toHaveLength(1);
    const query = queries[0]!.query;
    expect(query.id).toBeGreaterThan(0);
    expect(query.query.case).toBe("askQuestionInteractionQuery");
    const asked = query.query.case === "askQuestionInteractionQuery" ? query.query.value : undefined;
    expect(asked?.toolCallId).toBe("call_ask");
    expect(asked?.args?.questions.map((q) => q.prompt)).toEqual(["Which database?"]);
    const askUpdates = toolUpdates(first).filter((u) => u.callId === "call_ask");
    const queryOrder = first.timeline.find((e) => e.kind === "frame" && e.label.startsWith("query#"))!.order;
    expect(askUpdates.find((u) => u.case === "toolCallStarted")!.order).toBeLessThan(queryOrder);
    expect(askUpdates.find((u) => u.case === "toolCallCompleted")!.order).toBeGreaterThan(queryOrder);
    const askCard = completedCard(first, "call_ask");
    expect(askCard?.tool.case === "askQuestionToolCall" && askCard.tool.value.result?.result.case).toBe("success");

    // The model read the answer.
    const loop = afterLastUser(chatMessages(gw.llm.requestsTo("openai-chat")[1]));
    const answer = JSON.parse(textOf(loop.find((m) => m.tool_call_id === "call_ask")?.content)) as { answers: Array<{ selected: string[] }> };
    expect(answer.answers[0]?.selected).toEqual(["Postgres"]);

    // TodoWrite ran in the gateway: no exec, started and completed back to back.
    expect(first.timeline.some((e) => e.kind === "frame" && e.label.startsWith("exec#"))).toBe(false);
    const todoUpdates = toolUpdates(first).filter((u) => u.callId === "call_todo_1" && u.case !== "partialToolCall");
    expect(todoUpdates.map((u) => u.case)).toEqual(["toolCallStarted", "toolCallCompleted"]);
    expect(textOf(loop.find((m) => m.tool_call_id === "call_todo_1")?.content)).toContain("Set up the database");
    // ... and the settled checkpoint holds the list as TodoItem blobs.
    const decode = (ids: readonly Uint8Array[]) => ids.map((id) => fromBinary(tools.TodoItemSchema, chat.client.blobs.get(id)!));
    const todos = decode(first.lastSettled!.todos);
    expect(todos.map((t) => [t.id, t.content, t.status])).toEqual([
      ["setup", "Set up the database", tools.TodoStatus.IN_PROGRESS],
      ["tests", "Write tests", tools.TodoStatus.PENDING],
    ]);

    // ---- turn 2: merge into the list the client's checkpoint holds ----
    enqueueChat(gw, { id: "chatcmpl-todo-2", calls: [{ id: "call_todo_2", name: "TodoWrite", args: { merge: true, todos: [{ id: "setup", status: "completed" }] } }] });
    enqueueChat(gw, { id: "chatcmpl-todo-3", text: "Database done." });
    const second = await finishedOk(chat.send("The database is ready.", { modelId: gw.modelId }));
    expect(second.violations, second.describe()).toEqual([]);
    const merged = decode(second.lastSettled!.todos);
    expect(merged.map((t) => [t.id, t.status])).toEqual([
      ["setup", tools.TodoStatus.COMPLETED],
      ["tests", tools.TodoStatus.PENDING],
    ]);
    expect(merged[1]!.createdAt).toBe(todos[1]!.createdAt);
  });
});
