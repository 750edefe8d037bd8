/**
 * The conditions of every history write: the writing run is the conversation's
 * active run and the conversation head is where the writer expects it. The
 * conversation row is locked first, then the run: one lock order for all writes.
 */
import { lockConversationOfRun, type ConversationRow } from "./conversations.ts";
import type { Transaction } from "./database.ts";
import { ok, reject, type Outcome, type Rejection } from "./outcome.ts";
import { findRun, type RunRow } from "./run-rows.ts";

export interface LockedWriter {
  readonly run: RunRow;
  readonly conversation: ConversationRow;
}

export async function lockRunConversation(tx: Transaction, runId: string): Promise<Outcome<LockedWriter>> {
  if (runId === "") return reject("invalid", "run_id is required");
  const conversation = await lockConversationOfRun(tx, runId);
  if (!conversation) {
    const unlocked = await findRun(tx, runId);
    if (!unlocked) return reject("not_found", `run ${runId} not found`);
    throw new Error(`run ${runId} references missing conversation ${unlocked.conversationId}`);
  }
  const run = await findRun(tx, runId, "lock");
  if (!run) throw new Error(`run ${runId} vanished`);
  return ok({ run, conversation });
}

/** Why `runId` may not write onto `expectedHead` now; undefined when it may. */
export function writeRejection(conversation: ConversationRow, runId: string, expectedHead: string): Rejection | undefined {
  if (conversation.activeRunId !== runId) return { kind: "not_active", message: `run ${runId} is not the active run of conversation ${conversation.id}` };
  const head = conversation.headRevisionId ?? "";
  if (head !== expectedHead) return { kind: "head_mismatch", message: `conversation head is ${head || "(empty)"}, expected ${expectedHead || "(empty)"}` };
  return undefined;
}
