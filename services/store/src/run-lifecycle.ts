/**
 * run.begin and run.finish. A new run takes ownership of its conversation in one
 * transaction (superseding the active run) and appends its initial messages;
 * repeats are idempotent by run id. A start whose once client ids the
 * conversation already holds (once-starts.ts) is a repeat of an earlier start:
 * its run is recorded completed at once, takes nothing over and appends nothing.
 * A sub-agent run must belong to the member of its parent run.
 */
import type pg from "pg";
import type { Message, Usage } from "@byok/contracts";
import { createOrLockConversation, ensureConversationLocked } from "./conversations.ts";
import { commitBehind, inTransaction, together, type Transaction } from "./database.ts";
import { canonicalMessage } from "./message-codec.ts";
import { takenClientIds } from "./once-starts.ts";
import { ok, reject, type Outcome } from "./outcome.ts";
import { findRevision, prepareAppend, type RevisionRow } from "./revisions.ts";
import { countRepeatedBegin, countRepeatedBeginWithConversation, findRun, insertActiveRun, insertRun, supersedeRun, terminateRun, type RunFailureKind, type RunRow, type TerminalRunState } from "./run-rows.ts";
import { findOpenRound, type ToolRoundRow } from "./tool-round-rows.ts";
import { lockRunConversation } from "./write-guards.ts";

export interface BeginRunInput {
  readonly runId: string;
  readonly conversationId: string;
  readonly memberId: string;
  readonly baseRevisionId: string;
  readonly initialMessages: readonly Message[];
  readonly parentRunId: string;
  readonly parentToolCallId: string;
  readonly modelId: string;
  /** Client ids of initial messages the conversation takes only once. */
  readonly onceClientIds: readonly string[];
}

export interface BegunRun {
  readonly run: RunRow;
  /** The run this one superseded (marked cancelled in the same transaction). */
  readonly supersededRunId: string | null;
  /** A repeated start: which run (or "imported") took its once client ids; the run is completed. */
  readonly duplicateOf: string | null;
  /**
   * Set when the begin itself made the run's whole history (a new run, no base
   * revision): the history of its head, so the caller need not read it back.
   */
  readonly startHistory?: { readonly chain: string[]; readonly messageIds: string[]; readonly messages: Message[] };
  /** A repeated begin of a running run: its open tool round, read under the begin's locks. */
  readonly openRound?: ToolRoundRow;
}

/**
 * A begin of a run that exists (a redelivery). Its open tool round is read here,
 * inside the begin's transaction: the statement that counted the begin holds the
 * run's row lock, which tool_round.commit_result also takes, so a result
 * committed meanwhile is either in both the run's head and the round (settled
 * then) or in neither. Read after COMMIT instead, a result landing in between
 * left the begin with the old head and no open round: the new owner called the
 * model without the result, and its append was then refused.
 */
async function repeatedBegin(tx: Transaction, run: RunRow, input: BeginRunInput): Promise<Outcome<BegunRun>> {
  if (run.conversationId !== input.conversationId) return reject("invalid", `run ${run.id} belongs to conversation ${run.conversationId}`);
  if (run.memberId !== input.memberId) return reject("forbidden", `run ${run.id} belongs to another member`);
  const openRound = run.status === "running" ? await findOpenRound(tx, run.id, "share") : undefined;
  return ok({ run, supersededRunId: null, duplicateOf: null, ...(openRound === undefined ? {} : { openRound }) });
}

export function beginRun(pool: pg.Pool, input: BeginRunInput): Promise<Outcome<BegunRun>> {
  if (input.runId === "") return Promise.resolve(reject("invalid", "run_id is required"));
  const initial = input.initialMessages.map(canonicalMessage);
  return inTransaction<BegunRun>(pool, async (tx) => {
    if (input.conversationId === "" || input.memberId === "") {
      const known = await countRepeatedBegin(tx, input.runId);
      if (known) return repeatedBegin(tx, known, input);
      const refused = await ensureConversationLocked(tx, input.conversationId, input.memberId);
      if (refused.kind !== "ok") return refused;
      throw new Error("a begin without conversation or member id was not refused");
    }
    // One round trip (behind BEGIN) for everything the begin reads. The conversation is created or
    // locked first (a refused begin rolls a created one back); the statements behind the lock see it
    // as locked: one counts a repeated begin (also one that committed while we waited) and reads the
    // conversation, the others read what the begin may need (the parent run, the once client ids
    // taken, the base revision).
    const onceIds = [...new Set(input.onceClientIds.filter((id) => id !== ""))];
    const [, counted, parent, taken, found] = await together(
      createOrLockConversation(tx, input.conversationId, input.memberId),
      countRepeatedBeginWithConversation(tx, input.runId, input.conversationId),
      input.parentRunId !== "" ? findRun(tx, input.parentRunId) : Promise.resolve(undefined),
      onceIds.length > 0 ? takenClientIds(tx, input.conversationId, onceIds) : Promise.resolve(new Map<string, string>()),
      input.baseRevisionId !== "" ? findRevision(tx, input.baseRevisionId) : Promise.resolve(undefined),
    );
    const { run: known, conversation } = counted;
    if (known) return repeatedBegin(tx, known, input);
    if (!conversation) throw new Error(`conversation ${input.conversationId} vanished after insert`);
    if (conversation.memberId !== input.memberId) return reject("forbidden", `conversation ${input.conversationId} belongs to another member`);
    if (parent && parent.memberId !== input.memberId) return reject("forbidden", `parent run ${input.parentRunId} belongs to another member`);

    // The writes and COMMIT go in the second round trip (commitBehind).
    const newRun = {
      id: input.runId,
      conversationId: conversation.id,
      memberId: input.memberId,
      parentRunId: input.parentRunId,
      parentToolCallId: input.parentToolCallId,
      modelId: input.modelId,
    };
    if (onceIds.length > 0 && taken.size === onceIds.length) {
      const duplicateOf = taken.get(onceIds[0] as string) ?? null;
      return commitBehind(insertRun(tx, { ...newRun, startRevisionId: null }, "completed").then((run) => ({ run, supersededRunId: null, duplicateOf })));
    }

    let base: RevisionRow | null = null;
    if (input.baseRevisionId !== "") {
      if (!found && counted.contentPurged) {
        // The retention job deleted the history between the client's history.import and this begin.
        return reject(
          "invalid",
          `the stored history of conversation ${conversation.id} was deleted by its team's retention policy while this run started; send the message again (the next run imports the history from the client)`,
        );
      }
      if (!found || found.conversationId !== conversation.id)
        return reject("invalid", `base revision ${input.baseRevisionId} is not a revision of conversation ${conversation.id}`);
      base = found;
    }

    // The active run, if still running, is cancelled (superseded) by the statement that locks it
    // (conversation, then run: the lock order); the run is inserted behind it.
    const previousId = conversation.activeRunId;
    const superseding = previousId !== null ? supersedeRun(tx, previousId, input.runId) : Promise.resolve(false);
    // The initial messages are written by the statement that inserts the run.
    const append = initial.length > 0 ? prepareAppend({ conversationId: conversation.id, parent: base, messages: initial, run: { runId: input.runId, appendKey: "begin" } }) : undefined;
    const inserted = insertActiveRun(tx, newRun, append ?? { revisionId: base?.id ?? null });
    const written = together(superseding, inserted);
    return commitBehind(
      written.then(([superseded, run]): BegunRun => {
        const supersededRunId = superseded ? previousId : null;
        if (base === null && append !== undefined) {
          // A new revision has no context anchor and no compaction: its history is exactly the initial messages.
          const appended = append.revision;
          const startHistory = { chain: [appended.id], messageIds: [...appended.messageIds], messages: initial.map((m) => m.message) };
          return { run, supersededRunId, duplicateOf: null, startHistory };
        }
        return { run, supersededRunId, duplicateOf: null };
      }),
    );
  });
}

export interface FinishRunInput {
  readonly runId: string;
  readonly status: TerminalRunState;
  readonly failureKind: RunFailureKind | null;
  readonly failureMessage: string;
  readonly usage: Usage | undefined;
  /** The finishing owner's begin; a run begun again since refuses the finish (0: any owner). */
  readonly beginCount: number;
}

/** Sets the terminal status once; finishing a terminal run returns it unchanged; an owner superseded by a later begin is refused. */
export function finishRun(pool: pg.Pool, input: FinishRunInput): Promise<Outcome<RunRow>> {
  return inTransaction(pool, async (tx) => {
    if (input.runId === "") return reject("not_found", `run ${input.runId} not found`);
    const locked = await lockRunConversation(tx, input.runId);
    if (locked.kind !== "ok") return locked;
    const { run, conversation } = locked.value;
    if (run.status !== "running") return ok(run);
    if (input.beginCount > 0 && run.beginCount > input.beginCount) {
      return reject("not_active", `run ${run.id} was begun again (begin ${run.beginCount}); begin ${input.beginCount} cannot finish it`);
    }
    // The run ends and (when it is the active one) releases its conversation, in one statement;
    // COMMIT rides behind it (the second round trip; the lock went behind BEGIN).
    return commitBehind(
      terminateRun(
        tx,
        run.id,
        { status: input.status, failureKind: input.status === "failed" ? input.failureKind : null, failureMessage: input.failureMessage, usage: input.usage },
        conversation.activeRunId === run.id ? conversation.id : undefined,
      ),
    );
  });
}
