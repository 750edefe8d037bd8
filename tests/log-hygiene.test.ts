/**
 * Logs never contain API keys, prompt text or tool output (unless the content
 * debug switch is on), even at debug level: every service's log lines are
 * captured during a turn with a tool round, and searched for the canaries
 * planted in the prompt, the tool output, the model's answer and the key.
 */
import { randomBytes } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import type { tools } from "@byok/cursor-protocol";
import type { ExecContext } from "@byok/test-support/fake-cursor";
import { HARNESS_MOCK_KEY_ENV, startGateway, type GatewayHarness } from "@byok/test-support/gateway-harness";
import type { LogCapture } from "@byok/test-support/service-logger";
import { enqueueChat, execArgs, finishedOk, readSuccess } from "./tools-support.ts";

describe("log hygiene", () => {
  let gw: GatewayHarness | undefined;
  afterEach(async () => {
    await gw?.stop();
    gw = undefined;
  });

  it("debug-level logs of every service carry run ids but no key, prompt text, tool output or answer text", async () => {
    const tag = randomBytes(6).toString("hex");
    const canaries = {
      key: `sk-canary-key-${tag}`,
      prompt: `prompt-canary-${tag}`,
      toolOutput: `tool-output-canary-${tag}`,
      answer: `answer-canary-${tag}`,
    };
    const logs: LogCapture = { level: "debug", lines: [] };
    gw = await startGateway({ logs, env: { providerGateway: { [HARNESS_MOCK_KEY_ENV]: canaries.key } } });
    enqueueChat(gw, { id: "chatcmpl-log-1", text: "Let me read it.", calls: [{ id: "call_log_read", name: "Read", args: { path: "/home/dev/project/notes.txt" } }] });
    enqueueChat(gw, { id: "chatcmpl-log-2", text: `The file says ${canaries.answer}.` });

    const result = await finishedOk(
      gw.client().conversation().send(`Please summarise notes.txt ${canaries.prompt}`, {
        modelId: gw.modelId,
        onExec: {
          readArgs: async (ctx: ExecContext) => {
            await ctx.reply(readSuccess(execArgs<tools.ReadArgs>(ctx).path, `secret notes ${canaries.toolOutput}`));
          },
        },
      }),
    );
    // The canaries really went through the gateway: to the model and back to the client.
    expect(result.text).toContain(canaries.answer);
    const bodies = gw.llm.requestsTo("openai-chat").map((r) => JSON.stringify(r.body));
    expect(bodies.join("\n")).toContain(canaries.prompt);
    expect(bodies.at(-1)).toContain(canaries.toolOutput);
    expect(gw.llm.requestsTo("openai-chat")[0]?.headers["authorization"]).toBe(`Bearer ${canaries.key}`);

    // The services did log this run (so the search below is not vacuous) ...
    const entries = logs.lines.map((line) => JSON.parse(line) as { service?: string; run_id?: string });
    const services = new Set(entries.filter((e) => e.run_id === result.requestId).map((e) => e.service));
    expect([...services].sort()).toEqual(expect.arrayContaining(["cursor-adapter", "provider-gateway", "run-worker-1"]));
    // ... and no line holds any canary.
    const all = logs.lines.join("");
    for (const [what, canary] of Object.entries(canaries)) expect(all.includes(canary), `${what} found in the logs`).toBe(false);
  });
});
