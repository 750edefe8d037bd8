/**
 * End to end: Shell as the IDE runs it. Output streams into the tool card while
 * the command is still running; a command started in the background completes
 * its card at once, and AwaitShell waits for it by polling its terminal file.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { agent, tools } from "@byok/cursor-protocol";
import { RunStatus } from "@byok/contracts";
import { waitFor } from "@byok/test-support/infra";
import { DEFAULT_ENV, type CursorRun, type ExecContext } from "@byok/test-support/fake-cursor";
import { startGateway, type GatewayHarness } from "@byok/test-support/gateway-harness";
import { afterLastUser, chatMessages, textOf } from "@byok/test-support/chat-requests";
import { completedCard, enqueueChat, execArgs, execResult, finishedOk, readSuccess, toolUpdates } from "./tools-support.ts";

const TERMINAL_FILE = `${DEFAULT_ENV.terminalsFolder}/7.txt`;

function isStdoutDelta(message: agent.AgentServerMessage, text: string): boolean {
  if (message.message.case !== "interactionUpdate") return false;
  const update = message.message.value.message;
  if (update.case !== "toolCallDelta") return false;
  const delta = update.value.toolCallDelta?.delta;
  return delta?.case === "shellToolCallDelta" && delta.value.delta.case === "stdout" && delta.value.delta.value.content === text;
}

/** "stdout" / "stderr" for a Shell output delta, else undefined. */
function shellStream(update: agent.InteractionUpdate["message"]): string | undefined {
  if (update.case !== "toolCallDelta") return undefined;
  const delta = update.value.toolCallDelta?.delta;
  return delta?.case === "shellToolCallDelta" ? delta.value.delta.case : undefined;
}

describe("shell end to end", () => {
  let gw: GatewayHarness;
  beforeEach(async () => {
    gw = await startGateway();
  });
  afterEach(async () => {
    await gw.stop();
  });

  it("streams output into the card before the exit; a background shell completes at once and AwaitShell waits for it", async () => {
    enqueueChat(gw, {
      id: "chatcmpl-shell-1",
      text: "Running the tests and starting the server.",
      calls: [
        { id: "call_shell_fg", name: "Shell", args: { command: "npm test", description: "Run the tests" } },
        { id: "call_shell_bg", name: "Shell", args: { command: "npm run dev", block_until_ms: 0 } },
      ],
    });
    enqueueChat(gw, { id: "chatcmpl-shell-2", calls: [{ id: "call_await", name: "AwaitShell", args: { shell_id: "7", block_until_ms: 20_000 } }] });
    enqueueChat(gw, { id: "chatcmpl-shell-3", text: "Tests pass and the server started." });

    const shellArgs: tools.ShellArgs[] = [];
    let terminalReads = 0;
    let exitSentAt: number | undefined;
    const onExec = {
      shellStreamArgs: async (ctx: ExecContext) => {
        const args = execArgs<tools.ShellArgs>(ctx);
        shellArgs.push(args);
        const event = (e: MessageInitShape<typeof tools.ShellStreamSchema>["event"]) => ctx.result(execResult({ case: "shellStream", value: { event: e } }));
        await event({ case: "start", value: {} });
        if (args.isBackground) {
          await event({ case: "backgrounded", value: { shellId: 7, command: args.command, workingDirectory: "/home/dev/project", pid: 4242 } });
          await ctx.close();
          return;
        }
        await event({ case: "stdout", value: { data: "PASS src/a.test.ts\n" } });
        await event({ case: "stderr", value: { data: "warning: slow test\n" } });
        // Exit only once the IDE shows the output: the card streams while the command runs.
        await run.waitForFrame((m) => isStdoutDelta(m, "PASS src/a.test.ts\n"), "stdout in the Shell card");
        exitSentAt = performance.now();
        await event({ case: "exit", value: { code: 0, cwd: "/home/dev/project" } });
        await ctx.close();
      },
      readArgs: async (ctx: ExecContext) => {
        const { path } = execArgs<tools.ReadArgs>(ctx);
        expect(path).toBe(TERMINAL_FILE);
        terminalReads += 1;
        const header = "---\npid: 4242\ncwd: /home/dev/project\ncommand: npm run dev\nrunning_for_ms: 900\n---\n";
        const body = "> dev\nserver listening on :3000\n";
        await ctx.reply(readSuccess(path, terminalReads === 1 ? header + body : `${header}${body}ready\n---\nexit_code: 0\nelapsed_ms: 2100\n---\n`));
      },
    };
    const run: CursorRun = gw.client().conversation().send("Run the tests and start the dev server.", { modelId: gw.modelId, onExec });
    const result = await finishedOk(run);
    expect(result.violations, result.describe()).toEqual([]);
    expect(result.text).toContain("Tests pass");

    // The shell execs: foreground with the default wait, background with block_until_ms 0.
    const fg = shellArgs.find((a) => a.toolCallId === "call_shell_fg")!;
    const bg = shellArgs.find((a) => a.toolCallId === "call_shell_bg")!;
    expect(fg).toMatchObject({ command: "npm test", timeout: 30_000, isBackground: false, description: "Run the tests" });
    expect(bg).toMatchObject({ command: "npm run dev", timeout: 0, isBackground: true });

    // Output reached the card (stdout and stderr deltas) before the exit and before the card completed.
    const fgUpdates = toolUpdates(result).filter((u) => u.callId === "call_shell_fg");
    const stdout = fgUpdates.find((u) => u.update.case === "toolCallDelta" && u.update.value.toolCallDelta?.delta.case === "shellToolCallDelta");
    const completed = fgUpdates.find((u) => u.case === "toolCallCompleted")!;
    expect(stdout).toBeDefined();
    expect(stdout!.at).toBeLessThan(exitSentAt!);
    expect(stdout!.order).toBeLessThan(completed.order);
    const kinds = fgUpdates.map((u) => shellStream(u.update)).filter((k) => k !== undefined);
    expect(kinds).toEqual(["stdout", "stderr"]);
    const fgCard = completedCard(result, "call_shell_fg");
    const fgResult = fgCard?.tool.case === "shellToolCall" ? fgCard.tool.value.result : undefined;
    expect(fgResult?.result.case).toBe("success");
    expect(fgResult?.result.case === "success" && fgResult.result.value).toMatchObject({ exitCode: 0, stdout: "PASS src/a.test.ts\n", stderr: "warning: slow test\n" });

    // The background shell's card completed with the shell id; the model was told how to wait for it.
    const bgCard = completedCard(result, "call_shell_bg");
    const bgResult = bgCard?.tool.case === "shellToolCall" ? bgCard.tool.value.result : undefined;
    expect(bgResult?.isBackground).toBe(true);
    expect(bgResult?.result.case === "success" && bgResult.result.value.shellId).toBe(7);
    const requests = gw.llm.requestsTo("openai-chat");
    const round1 = afterLastUser(chatMessages(requests[1]));
    const toolText = (messages: typeof round1, id: string) => textOf(messages.find((m) => m.role === "tool" && m.tool_call_id === id)?.content);
    expect(toolText(round1, "call_shell_bg")).toContain("shell_id 7");
    expect(toolText(round1, "call_shell_fg")).toContain("PASS src/a.test.ts");

    // AwaitShell polled the terminal file until the command ended, then reported its exit.
    expect(terminalReads).toBe(2);
    const awaitCard = completedCard(result, "call_await");
    const awaitResult = awaitCard?.tool.case === "awaitToolCall" ? awaitCard.tool.value.result?.result : undefined;
    expect(awaitResult?.case === "success" && awaitResult.value.awaitResult.case).toBe("complete");
    const round2 = afterLastUser(chatMessages(requests[2]));
    expect(toolText(round2, "call_await")).toContain("Shell 7 finished with exit code 0");
    expect(toolText(round2, "call_await")).toContain("server listening on :3000");
    // Nothing was left running: no exec was aborted.
    expect(result.timeline.some((e) => e.kind === "frame" && e.label.startsWith("exec_abort"))).toBe(false);
  });

  it("cancel while a command runs: the exec is aborted before EndStream canceled, the run is cancelled, nothing of the round is stored", async () => {
    enqueueChat(gw, { id: "chatcmpl-shell-cancel", calls: [{ id: "call_shell_long", name: "Shell", args: { command: "sleep 600" } }] });
    let aborted = false;
    const chat = gw.client().conversation();
    const run: CursorRun = chat.send("Wait ten minutes.", {
      modelId: gw.modelId,
      onExec: {
        shellStreamArgs: async (ctx: ExecContext) => {
          await ctx.result(execResult({ case: "shellStream", value: { event: { case: "start", value: {} } } }));
          await ctx.result(execResult({ case: "shellStream", value: { event: { case: "stdout", value: { data: "sleeping\n" } } } }));
          await new Promise<void>((resolve) => ctx.signal.addEventListener("abort", () => resolve(), { once: true }));
          aborted = true;
        },
      },
    });
    await run.waitForFrame((m) => isStdoutDelta(m, "sleeping\n"), "the shell output");
    await run.cancel("user pressed stop");
    const result = await run.finished;
    const frames = result.describe();
    expect(result.end, frames).toMatchObject({ kind: "error", code: "canceled" });
    expect(result.violations, frames).toEqual([]);
    expect(aborted).toBe(true);
    const abortEntry = result.timeline.find((e) => e.kind === "frame" && e.label.startsWith("exec_abort#"));
    expect(abortEntry, frames).toBeDefined();
    expect(abortEntry!.order).toBeLessThan(result.timeline.find((e) => e.kind === "end")!.order);
    expect(result.turnEnded).toBeUndefined();
    expect(result.checkpoints.filter((c) => c.kind === "settled")).toEqual([]);
    await waitFor(async () => (await gw.store("getRun", { runId: result.requestId })).run?.status === RunStatus.CANCELLED, "the run cancelled", 10_000);
    const conversation = await gw.store("getConversation", { conversationId: chat.id });
    const history = conversation.headRevisionId === "" ? [] : (await gw.store("getRevisionMessages", { revisionId: conversation.headRevisionId })).messages;
    expect(history.filter((m) => m.body.case !== "user")).toEqual([]);
  });
});
