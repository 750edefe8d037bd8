/**
 * A lost terminal state event: the run owner recorded the run's end in the
 * store, but its terminal never reached the adapter. The session must not
 * stay open on heartbeats forever: after a silent interval it reads the run's
 * record and ends the Cursor stream with the outcome recorded there.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { randomUUID } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import { CommitCause, FailureKind, MessageSchema, RunStatus, type PreparedRun } from "@byok/contracts";
import { agent } from "@byok/cursor-protocol";
import { waitFor } from "@byok/test-support/infra";
import { terminalOfRecord } from "./run-status-watch.ts";
import { FakeCursorClient, startSessionWorld, type SessionWorld } from "./test-harness.ts";

let world: SessionWorld;

beforeAll(async () => {
  world = await startSessionWorld({ runStatusCheckMs: 150 });
});

afterAll(async () => {
  await world?.close();
});

function userTurn(conversationId: string, text: string) {
  return {
    conversationId,
    conversationState: {},
    requestedModel: { modelId: "sonnet-test" },
    action: {
      action: {
        case: "userMessageAction" as const,
        value: { userMessage: { text, messageId: `m-${text}`, mode: agent.AgentMode.AGENT }, requestContext: { env: { osVersion: "linux", shell: "/bin/bash", workspacePaths: ["/w"], timeZone: "UTC" } } },
      },
    },
  };
}

const answer = create(MessageSchema, { body: { case: "assistant", value: { content: [{ part: { case: "text", value: { text: "Done." } } }] } } });

/** Opens a run and begins it in the store, as its owner would. */
async function begunRun(client: FakeCursorClient): Promise<{ runId: string; run: PreparedRun; headRevisionId: string }> {
  const conversationId = randomUUID();
  const runId = world.open(client, userTurn(conversationId, "go"));
  const run = await world.takeRun(runId);
  const begun = await world.storeCall("beginRun", {
    runId,
    conversationId,
    memberId: "member-a",
    baseRevisionId: run.baseRevisionId,
    initialMessages: run.action.case === "start" ? run.action.value.initialMessages : [],
    modelId: "sonnet-test",
  });
  expect(begun.error).toBeUndefined();
  return { runId, run, headRevisionId: begun.run!.headRevisionId };
}

describe("run status watch", () => {
  it("ends the stream with the recorded failure when the failed run's terminal was lost", async () => {
    const client = new FakeCursorClient();
    const { runId } = await begunRun(client);
    world.event(runId, 1, { case: "textStart", value: { index: 0 } });
    world.event(runId, 2, { case: "textDelta", value: { index: 0, text: "Partial" } });
    await waitFor(() => client.uiFrames().includes("textDelta"), "the first text");
    expect(client.outcome).toBeUndefined();

    // The owner records the end; its terminal state event never arrives.
    const finished = await world.storeCall("finishRun", { runId, status: RunStatus.FAILED, failureKind: FailureKind.PROVIDER, failureMessage: "upstream 529 overloaded" });
    expect(finished.error).toBeUndefined();
    const outcome = await waitFor(() => client.outcome, "the stream to end from the run record", 5_000);
    expect(outcome).toMatchObject({ kind: "error", code: "unavailable", message: "upstream 529 overloaded" });
    // The run is over: nothing is sent to its owner.
    expect(await world.lastCommand(runId)).toBeUndefined();
  });

  it("ends the stream like a completed terminal (settled checkpoint again, then ok) when the completed run's terminal was lost", async () => {
    const client = new FakeCursorClient();
    const { runId, headRevisionId } = await begunRun(client);
    const appended = await world.storeCall("appendMessages", { runId, expectedHeadRevisionId: headRevisionId, messages: [answer], providerCallIndex: 1 });
    expect(appended.error).toBeUndefined();
    expect(await world.state(runId, { case: "stateCommitted", value: { revisionId: appended.revisionId, cause: CommitCause.FINAL_ANSWER, appended: [answer] } })).toMatchObject({ ok: true });
    expect(client.uiFrames().slice(-2)).toEqual(["staged", "settled"]);

    await world.storeCall("finishRun", { runId, status: RunStatus.COMPLETED });
    const outcome = await waitFor(() => client.outcome, "the stream to end from the run record", 5_000);
    expect(outcome).toEqual({ kind: "ok" });
    expect(client.uiFrames().slice(-2)).toEqual(["settled", "settled"]);
    expect(await world.lastCommand(runId)).toBeUndefined();
  });

  it("maps only ended records to a terminal", () => {
    const record = (status: RunStatus) => ({ status, failureKind: FailureKind.STORE, failureMessage: "x" }) as Parameters<typeof terminalOfRecord>[0];
    expect(terminalOfRecord(record(RunStatus.RUNNING))).toBeUndefined();
    expect(terminalOfRecord(record(RunStatus.UNSPECIFIED))).toBeUndefined();
    expect(terminalOfRecord(record(RunStatus.COMPLETED))).toEqual({ outcome: { case: "completed", value: {} } });
    expect(terminalOfRecord(record(RunStatus.CANCELLED))).toEqual({ outcome: { case: "cancelled", value: { reason: "x" } } });
    expect(terminalOfRecord(record(RunStatus.FAILED))).toEqual({ outcome: { case: "failed", value: { kind: FailureKind.STORE, message: "x" } } });
  });
});
