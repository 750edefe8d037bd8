/**
 * End to end over ACP, durability as for Cursor runs: the bridge's connection
 * drops mid-round and resumes the session (the editor notices nothing: no
 * request lost, none answered twice); the run worker owning a round is killed
 * with SIGKILL and the next one re-runs only the call without a result. In
 * both cases every tool runs once in the editor and every message is stored
 * once.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Message } from "@byok/contracts";
import { startGateway, type GatewayHarness } from "@byok/test-support/gateway-harness";
import { waitFor } from "@byok/test-support/infra";
import { storedHistory } from "@byok/test-support/stored-messages";
import { AcpEditor, type PermissionAnswer } from "./acp-editor.ts";
import { TestProcesses } from "./failover-support.ts";
import { afterLastUser, chatMessages } from "@byok/test-support/chat-requests";
import { enqueueChat } from "./tools-support.ts";

/** Redelivery within ~2 s of the crash instead of the default 30 s. */
const FAST_REDELIVERY = { RUN_ACK_WAIT_MS: "2000", RUN_WORKING_INTERVAL_MS: "500" };

function gate(): { wait: Promise<void>; open(): void } {
  let open: () => void = () => undefined;
  const wait = new Promise<void>((resolve) => (open = resolve));
  return { wait, open };
}

function kinds(messages: readonly Message[]): string[] {
  return messages.map((m) => (m.body.case === "toolResult" ? `result:${m.body.value.callId}` : m.body.case ?? ""));
}

describe("ACP durability", () => {
  let gw: GatewayHarness;
  let editor: AcpEditor | undefined;
  const processes = new TestProcesses();

  afterEach(async () => {
    await editor?.close();
    try {
      await processes.stopAll();
    } finally {
      await gw.stop();
    }
  });

  async function connect(permission: () => Promise<PermissionAnswer>): Promise<AcpEditor> {
    const { key } = await gw.createMember("durable-user");
    editor = AcpEditor.start({ gatewayUrl: gw.acp!.gatewayUrl, key, caFile: gw.acp!.caFile, permission });
    await editor.initialize();
    return editor;
  }

  /**
   * Both scenarios: a session asked to copy a.txt to b.txt (the model reads
   * a, then writes b, then answers `finalText`); the editor holds its answer
   * to the write's permission request until `answer.open()`, and `asked`
   * opens when the request arrives.
   */
  async function copyScenario(tag: string, finalText: string) {
    const asked = gate();
    const answer = gate();
    const e = await connect(async () => {
      asked.open();
      await answer.wait;
      return "allow-once";
    });
    const { sessionId } = await e.newSession("/home/dev/project");
    e.files.set("/home/dev/project/a.txt", "A\n");
    enqueueChat(gw, {
      id: `chatcmpl-acp-${tag}-1`,
      calls: [
        { id: `call_${tag}_read`, name: "read_file", args: { path: "/home/dev/project/a.txt" } },
        { id: `call_${tag}_write`, name: "write_file", args: { path: "/home/dev/project/b.txt", content: "B\n" } },
      ],
    });
    enqueueChat(gw, { id: `chatcmpl-acp-${tag}-2`, text: finalText });
    return { e, sessionId, asked, answer };
  }

  describe("with an in-process worker", () => {
    beforeEach(async () => {
      // Short pings: the adapter notices the dead socket quickly.
      gw = await startGateway({ acpAdapter: true, env: { acpAdapter: { LINK_PING_MS: "200" } } });
    });

    it("resumes the session when the bridge's connection drops mid-round", async () => {
      const { e, sessionId, asked, answer } = await copyScenario("drop", "Copied after the reconnect.");
      const prompt = e.prompt(sessionId, "Copy a to b");

      // The editor is asked for the write; the network drops before it answers.
      await asked.wait;
      gw.acp!.adapter.links.dropSockets();
      await waitFor(() => e.stderr.join("").includes("gateway link resumed"), "the bridge to resume its link", 15_000);
      answer.open();

      expect((await prompt).stopReason).toBe("end_turn");
      expect(e.agentText(sessionId)).toBe("Copied after the reconnect.");
      expect(e.permissions).toHaveLength(1);
      expect(e.reads.filter((r) => r.path === "/home/dev/project/a.txt")).toHaveLength(1);
      expect(e.writes.map((w) => w.path)).toEqual(["/home/dev/project/b.txt"]);
      expect(gw.acp!.adapter.links.links()).toHaveLength(1);
      const loop = afterLastUser(chatMessages(gw.llm.requestsTo("openai-chat")[1]));
      expect(loop.filter((m) => m.role === "tool").map((m) => m.tool_call_id)).toEqual(["call_drop_read", "call_drop_write"]);
      expect(kinds(await storedHistory(gw, sessionId))).toEqual(["user", "user", "assistant", "result:call_drop_read", "assistant", "result:call_drop_write", "assistant"]);
    });
  });

  describe("with a worker process", () => {
    beforeEach(async () => {
      gw = await startGateway({ acpAdapter: true, workers: 0, env: { runWorker: FAST_REDELIVERY } });
    });

    it("re-runs only the call without a result when the worker owning the round is killed", async () => {
      const { e, sessionId, asked, answer } = await copyScenario("kill", "Done despite the crash.");
      const doomed = await processes.startRunWorker(gw, "doomed-acp-worker");
      const prompt = e.prompt(sessionId, "Copy a to b");

      // The read's result is committed, the write waits for the member: the worker dies.
      await asked.wait;
      const [run] = await gw.sql<{ id: string }>("SELECT id FROM runs WHERE conversation_id = $1", [sessionId]);
      await waitFor(async () => (await gw.store("getOpenToolRound", { runId: run!.id })).round?.results.length === 1, "the read's result committed", 10_000);
      await doomed.kill("SIGKILL");
      const next = await processes.startRunWorker(gw, "next-acp-worker");
      // The new owner rebuilds the round from the store and asks for the one call without a result again.
      await next.waitForLine(/"msg":"continuing the open tool round"/, "the next worker to continue the round", 20_000);
      await next.waitForLine(/"msg":"tool round executing"/, "the next worker to re-send the round", 20_000);
      answer.open();

      expect((await prompt).stopReason).toBe("end_turn");
      expect(e.agentText(sessionId)).toBe("Done despite the crash.");
      // Each tool ran once in the editor; each message is stored once.
      expect(e.reads.filter((r) => r.path === "/home/dev/project/a.txt")).toHaveLength(1);
      expect(e.permissions).toHaveLength(1);
      expect(e.writes.map((w) => w.path)).toEqual(["/home/dev/project/b.txt"]);
      expect(kinds(await storedHistory(gw, sessionId))).toEqual(["user", "user", "assistant", "result:call_kill_read", "assistant", "result:call_kill_write", "assistant"]);
    });
  });
});
