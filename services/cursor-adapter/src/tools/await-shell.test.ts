import { create } from "@bufbuild/protobuf";
import { tools } from "@byok/cursor-protocol";
import { describe, expect, it } from "vitest";
import { AWAIT_POLL_INTERVAL_MS, parseTerminalFile } from "./await-shell.ts";
import { planToolCall } from "./plan-tool-call.ts";
import { doneOf, execOf, invalidOf, testContext, variantOf, type TestClock } from "./tool-test-support.ts";
import type { ExecReply } from "./types.ts";

const RUNNING = "---\npid: 4242\ncwd: /w\ncommand: npm run dev\nrunning_for_ms: 5000\n---\nstarting\nlistening on :3000\n";
const FINISHED = `${RUNNING}done\n\n---\nexit_code: 2\nelapsed_ms: 9100\nended_at: 2026-01-01T00:00:00Z\n---\n`;

const terminal = (content: string): ExecReply => ({
  case: "readResult",
  value: create(tools.ReadResultSchema, { result: { case: "success", value: { output: { case: "content", value: content } } } }),
});

function awaitShell(args: object, clock: TestClock = { now: 10_000 }, terminalsFolder?: string) {
  return planToolCall(
    { callId: "call_aw", name: "AwaitShell", argumentsJson: JSON.stringify(args) },
    testContext({ clock, ...(terminalsFolder === undefined ? {} : { terminalsFolder }) }),
  );
}

describe("parseTerminalFile", () => {
  it("separates header, body and exit footer", () => {
    expect(parseTerminalFile(RUNNING)).toEqual({ body: "starting\nlistening on :3000", finished: false, runningForMs: 5000 });
    expect(parseTerminalFile(FINISHED)).toEqual({
      body: "starting\nlistening on :3000\ndone",
      finished: true,
      exitCode: 2,
      runningForMs: 5000,
      elapsedMs: 9100,
    });
  });

  it("does not take command output that looks like a footer key for the end of the command", () => {
    expect(parseTerminalFile("---\npid: 1\n---\nexit_code: 0 was printed\n").finished).toBe(false);
  });
});

describe("AwaitShell", () => {
  it("polls the shell's terminal file until the command exits", () => {
    const clock = { now: 10_000 };
    const plan = awaitShell({ shell_id: "7", block_until_ms: 20_000 }, clock);
    const exec = execOf(plan);
    expect(exec.first).toEqual({
      request: { case: "readArgs", value: expect.objectContaining({ path: "/home/u/.cursor/projects/p/terminals/7.txt", toolCallId: "call_aw" }) },
      delayMs: 0,
    });
    expect(variantOf(plan.started, "awaitToolCall").args).toMatchObject({ taskId: "7", blockUntilMs: 20_000 });

    clock.now = 11_000;
    const again = exec.onReply(terminal(RUNNING));
    expect(again).toMatchObject({ kind: "next", step: { request: { case: "readArgs" }, delayMs: AWAIT_POLL_INTERVAL_MS } });

    clock.now = 12_000;
    const outcome = doneOf(exec.onReply(terminal(FINISHED)));
    expect(outcome.isError).toBe(false);
    expect(outcome.content).toContain("Shell 7 finished with exit code 2.");
    expect(outcome.content).toContain("listening on :3000\ndone");
    expect(variantOf(outcome.toolCall, "awaitToolCall").result?.result).toMatchObject({
      case: "success",
      value: { awaitResult: { case: "complete", value: { taskId: "7", exitCode: 2, runtimeMs: 9100n, wakeReason: "task_complete" } } },
    });
  });

  it("stops early when the output matches the pattern", () => {
    const exec = execOf(awaitShell({ shell_id: "7", pattern: "listening on :\\d+" }));
    const outcome = doneOf(exec.onReply(terminal(RUNNING)));
    expect(outcome.content).toContain('matched the pattern: "listening on :3000"');
    expect(variantOf(outcome.toolCall, "awaitToolCall").result?.result).toMatchObject({
      value: { awaitResult: { case: "stillRunning", value: { regexRequested: true, regexMatch: "listening on :3000" } } },
    });
  });

  it("reports still running when the wait budget is spent", () => {
    const clock = { now: 10_000 };
    const exec = execOf(awaitShell({ shell_id: "7", block_until_ms: 1_500 }, clock));
    clock.now = 10_800;
    const outcome = doneOf(exec.onReply(terminal(RUNNING)));
    expect(outcome.content).toMatch(/^Shell 7 is still running\./);
  });

  it("reports an unknown shell id as a tool error", () => {
    const exec = execOf(awaitShell({ shell_id: "99" }));
    const missing: ExecReply = { case: "readResult", value: create(tools.ReadResultSchema, { result: { case: "fileNotFound", value: {} } }) };
    const outcome = doneOf(exec.onReply(missing));
    expect(outcome.isError).toBe(true);
    expect(outcome.content).toMatch(/No output file for shell 99/);
  });

  it("sleeps in the gateway without a shell id", async () => {
    const plan = awaitShell({ block_until_ms: 2_000 });
    if (plan.kind !== "server") throw new Error(plan.kind);
    expect(plan.delayMs).toBe(2_000);
    expect((await plan.complete()).content).toBe("Waited 2000 ms.");
  });

  it("rejects a wait of 0 without a shell id, a bad pattern, and an unknown terminals folder", () => {
    expect(invalidOf(awaitShell({ block_until_ms: 0 })).error).toMatch(/must be between 1 and 60000/);
    expect(invalidOf(awaitShell({ shell_id: "1", pattern: "(" })).error).toMatch(/not a valid regular expression/);
    expect(invalidOf(awaitShell({ shell_id: "1" }, undefined, "")).error).toMatch(/terminals folder/);
  });
});
