import { create, toBinary } from "@bufbuild/protobuf";
import { tools } from "@byok/cursor-protocol";
import { describe, expect, it } from "vitest";
import { planToolCall } from "./plan-tool-call.ts";
import { doneOf, execOf, invalidOf, testContext, variantOf, viaWire, type TestClock } from "./tool-test-support.ts";
import type { ExecReply } from "./types.ts";

type StreamEvent = tools.ShellStream["event"];

function stream(event: StreamEvent): ExecReply {
  return { case: "shellStream", value: viaWire(tools.ShellStreamSchema, create(tools.ShellStreamSchema, { event })) };
}

const out = (data: string): ExecReply => stream({ case: "stdout", value: create(tools.ShellStreamStdoutSchema, { data }) });
const err = (data: string): ExecReply => stream({ case: "stderr", value: create(tools.ShellStreamStderrSchema, { data }) });
const exit = (code: number, extra: { aborted?: boolean; abortReason?: tools.ShellAbortReason; outputLocation?: tools.OutputLocation } = {}): ExecReply =>
  stream({ case: "exit", value: create(tools.ShellStreamExitSchema, { code, cwd: "/w", ...extra }) });

function shell(args: object, clock?: TestClock) {
  return planToolCall({ callId: "call_sh", name: "Shell", argumentsJson: JSON.stringify(args) }, testContext(clock === undefined ? {} : { clock }));
}

describe("Shell", () => {
  it("encodes shell_stream_args with the official defaults", () => {
    const plan = shell({ command: "npm test", description: "Run tests", working_directory: "/w" });
    const request = execOf(plan).first.request;
    if (request.case !== "shellStreamArgs") throw new Error(request.case);
    expect(request.value).toMatchObject({
      command: "npm test",
      workingDirectory: "/w",
      timeout: 30_000,
      toolCallId: "call_sh",
      fileOutputThresholdBytes: 40_000n,
      isBackground: false,
      timeoutBehavior: tools.TimeoutBehavior.BACKGROUND,
      hardTimeout: 86_400_000,
      description: "Run tests",
      closeStdin: true,
      conversationId: "conv-1",
    });
    expect(request.value.requestedSandboxPolicy).toBeUndefined();
    // field 3 (timeout) = 30000 and field 13 (timeout_behavior) = 2 on the wire
    const hex = Buffer.from(toBinary(tools.ShellArgsSchema, request.value)).toString("hex");
    expect(hex).toContain("18b0ea01");
    expect(hex).toContain("6802");
    expect(variantOf(plan.started, "shellToolCall")).toMatchObject({ args: { command: "npm test" }, description: "Run tests" });
  });

  it("streams stdout/stderr as tool_call_delta before the exit result", () => {
    const clock = { now: 1_000 };
    const exec = execOf(shell({ command: "make" }, clock));
    const first = exec.onReply(out("building\n"));
    expect(first.kind).toBe("waiting");
    if (first.kind !== "waiting") return;
    expect(first.delta?.delta).toMatchObject({ case: "shellToolCallDelta", value: { delta: { case: "stdout", value: { content: "building\n" } } } });
    const second = exec.onReply(err("warning: x\n"));
    expect(second.kind === "waiting" && second.delta?.delta.case === "shellToolCallDelta" && second.delta.delta.value.delta.case).toBe("stderr");
    expect(exec.onReply(stream({ case: "start", value: create(tools.ShellStreamStartSchema) })).kind).toBe("waiting");

    clock.now = 3_500;
    const outcome = doneOf(exec.onReply(exit(0)));
    expect(outcome).toMatchObject({ isError: false, content: "Exit code: 0\n\nbuilding\nwarning: x\n" });
    const result = variantOf(outcome.toolCall, "shellToolCall").result;
    expect(result?.result).toMatchObject({
      case: "success",
      value: { command: "make", exitCode: 0, stdout: "building\n", stderr: "warning: x\n", interleavedOutput: "building\nwarning: x\n", executionTime: 2_500 },
    });
    expect(outcome.toolCall.startedAtMs).toBe(1_000n);
    expect(outcome.toolCall.completedAtMs).toBe(3_500n);
  });

  it("reports a non-zero exit as a failure card but a normal result for the model", () => {
    const exec = execOf(shell({ command: "false" }));
    const outcome = doneOf(exec.onReply(exit(1)));
    expect(outcome).toMatchObject({ isError: false, content: "Exit code: 1\n\n(no output)" });
    expect(variantOf(outcome.toolCall, "shellToolCall").result?.result).toMatchObject({ case: "failure", value: { exitCode: 1 } });
  });

  it("notes an aborted command and the spilled output file", () => {
    const exec = execOf(shell({ command: "yes" }));
    exec.onReply(out("y\n"));
    const outcome = doneOf(
      exec.onReply(
        exit(130, {
          aborted: true,
          abortReason: tools.ShellAbortReason.USER_ABORT,
          outputLocation: create(tools.OutputLocationSchema, { filePath: "/t/out.txt", sizeBytes: 900_000n, lineCount: 450_000n }),
        }),
      ),
    );
    expect(outcome.content).toBe(
      "Exit code: 130\nThe user aborted the command.\n\ny\n\n\nFull output: /t/out.txt (450000 lines, 900000 bytes).",
    );
  });

  it("backgrounds at once with block_until_ms 0 and completes on backgrounded", () => {
    const plan = shell({ command: "npm run dev", block_until_ms: 0 });
    const exec = execOf(plan);
    expect(exec.first.request.value).toMatchObject({ timeout: 0, isBackground: true });
    exec.onReply(out("ready on :3000\n"));
    const outcome = doneOf(
      exec.onReply(stream({ case: "backgrounded", value: create(tools.ShellStreamBackgroundedSchema, { shellId: 7, pid: 4242, command: "npm run dev" }) })),
    );
    expect(outcome.isError).toBe(false);
    expect(outcome.content).toContain("still running in the background (shell_id 7, pid 4242)");
    expect(outcome.content).toContain("/home/u/.cursor/projects/p/terminals/7.txt");
    expect(outcome.content).toContain('AwaitShell with shell_id "7"');
    expect(outcome.content).toContain("ready on :3000");
    const result = variantOf(outcome.toolCall, "shellToolCall").result;
    expect(result).toMatchObject({ isBackground: true, terminalsFolder: "/home/u/.cursor/projects/p/terminals", pid: 4242 });
    expect(result?.result).toMatchObject({ case: "success", value: { shellId: 7 } });
  });

  it("caps the foreground wait at 60 s and maps required_permissions to a sandbox policy", () => {
    const request = execOf(shell({ command: "curl x", block_until_ms: 600_000, required_permissions: ["full_network"] })).first.request;
    expect(request.value).toMatchObject({
      timeout: 60_000,
      requestedSandboxPolicy: { type: tools.SandboxPolicy_Type.WORKSPACE_READWRITE, networkAccess: true },
    });
  });

  it("finishes with an error on rejection, throw, or a close without exit", () => {
    const rejected = doneOf(
      execOf(shell({ command: "rm -rf /" })).onReply(
        stream({ case: "rejected", value: create(tools.ShellRejectedSchema, { command: "rm -rf /", reason: "no" }) }),
      ),
    );
    expect(rejected).toMatchObject({ isError: true, content: "The user rejected the command: no" });
    expect(variantOf(rejected.toolCall, "shellToolCall").result?.result.case).toBe("rejected");

    const thrown = doneOf(execOf(shell({ command: "x" })).onThrow("spawn ENOENT"));
    expect(thrown).toMatchObject({ isError: true, content: "The shell failed to run the command: spawn ENOENT" });

    const closed = doneOf(execOf(shell({ command: "x" })).onClosedWithoutResult());
    expect(closed).toMatchObject({ isError: true, content: "The shell stream closed before the command finished." });
  });

  it("accepts a non-streaming shell_result and refuses a foreign result", () => {
    const exec = execOf(shell({ command: "ls" }));
    expect(exec.onReply({ case: "readResult", value: create(tools.ReadResultSchema) }).kind).toBe("protocol_error");
    const result = create(tools.ShellResultSchema, { result: { case: "success", value: { command: "ls", exitCode: 0, stdout: "a\n" } } });
    expect(doneOf(exec.onReply({ case: "shellResult", value: result })).content).toBe("Exit code: 0\n\na\n");
  });

  it("rejects a missing command with a typed error card", () => {
    const plan = invalidOf(shell({ block_until_ms: 5 }));
    expect(plan.error).toBe('Invalid arguments for Shell: "command" is required.');
    expect(variantOf(plan.outcome.toolCall, "shellToolCall").result?.result.case).toBe("spawnError");
  });
});
