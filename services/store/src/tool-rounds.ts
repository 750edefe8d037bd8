/**
 * Tool rounds (design/ARCHITECTURE.md §5.4). A round is persisted before any tool
 * runs; each result is then committed, in arrival order, as an adjacent pair
 * (assistant carrying only that tool call, then its result) together with the
 * call state and the new revision, in one transaction. The round's reasoning,
 * text and replay state ride on the first pair only.
 */
import { create } from "@bufbuild/protobuf";
import type pg from "pg";
import { AssistantMessageSchema, MessageSchema, type AssistantMessage, type ContentPart, type Message, type ToolCallPart } from "@byok/contracts";
import { recordContextAnchor } from "./context-anchors.ts";
import { commitBehind, inTransaction, together } from "./database.ts";
import { canonicalMessage, replaceNul } from "./message-codec.ts";
import { ok, reject, type Outcome } from "./outcome.ts";
import { findRunHead, loadRevisionOwnMessages, prepareAppend } from "./revisions.ts";
import { appendMovingRunHead, findRun, recordProviderCallIndex } from "./run-rows.ts";
import { findOpenRound, findRound, findRoundByCallIndex, insertResult, insertRound, roundTip, type ToolRoundRow } from "./tool-round-rows.ts";
import { lockRunConversation, writeRejection } from "./write-guards.ts";

export interface CreateToolRoundInput {
  readonly runId: string;
  readonly roundId: string;
  readonly expectedHeadRevisionId: string;
  readonly assistant: AssistantMessage | undefined;
  readonly providerCallIndex: number;
  /** Input tokens the provider reported for the call built from the expected head (its context anchor). */
  readonly requestInputTokens?: bigint | undefined;
}

export interface CreatedToolRound {
  readonly round: ToolRoundRow;
  /** The round had already been created (this call changed nothing). */
  readonly existing: boolean;
}

/** The assistant as it will be stored (canonical form), or why it cannot start a round. */
function roundAssistant(assistant: AssistantMessage | undefined): Outcome<{ assistant: AssistantMessage; calls: ToolCallPart[] }> {
  if (!assistant) return reject("invalid", "assistant is required");
  const stored = canonicalMessage(create(MessageSchema, { body: { case: "assistant", value: assistant } })).message;
  if (stored.body.case !== "assistant") throw new Error("canonical assistant message lost its body");
  const calls = stored.body.value.content.flatMap((part) => (part.part.case === "toolCall" ? [part.part.value] : []));
  if (calls.length === 0) return reject("invalid", "a tool round needs at least one tool call");
  const ids = new Set<string>();
  for (const call of calls) {
    if (call.callId === "") return reject("invalid", "tool call without call_id");
    if (ids.has(call.callId)) return reject("invalid", `duplicate tool call id ${JSON.stringify(call.callId)}`);
    ids.add(call.callId);
  }
  return ok({ assistant: stored.body.value, calls });
}

export function createToolRound(pool: pg.Pool, input: CreateToolRoundInput): Promise<Outcome<CreatedToolRound>> {
  if (input.roundId === "") return Promise.resolve(reject("invalid", "round_id is required"));
  const shaped = roundAssistant(input.assistant);
  if (shaped.kind !== "ok") return Promise.resolve(shaped);
  return inTransaction<CreatedToolRound>(pool, async (tx) => {
    // One round trip (behind BEGIN): the locks, then what the create decides on, read behind them.
    const [locked, same, sameCall, open, head] = await together(
      lockRunConversation(tx, input.runId),
      findRound(tx, input.runId, input.roundId),
      input.providerCallIndex > 0 ? findRoundByCallIndex(tx, input.runId, input.providerCallIndex) : Promise.resolve(undefined),
      findOpenRound(tx, input.runId),
      input.requestInputTokens !== undefined ? findRunHead(tx, input.runId) : Promise.resolve(undefined),
    );
    if (locked.kind !== "ok") return locked;
    const { conversation } = locked.value;
    if (same) return ok({ round: same, existing: true });
    if (sameCall) return ok({ round: sameCall, existing: true });
    const refused = writeRejection(conversation, input.runId, input.expectedHeadRevisionId);
    if (refused) return { kind: "rejected", rejection: refused };
    if (open) return reject("invalid", `run ${input.runId} already has the open tool round ${open.id}`);
    // The writes and COMMIT in the second round trip.
    const round = insertRound(tx, {
      runId: input.runId,
      id: input.roundId,
      baseRevisionId: conversation.headRevisionId,
      assistant: shaped.value.assistant,
      calls: shaped.value.calls,
      providerCallIndex: input.providerCallIndex,
    });
    const callIndex = recordProviderCallIndex(tx, input.runId, input.providerCallIndex);
    const anchored =
      head !== undefined && head.id === conversation.headRevisionId && input.requestInputTokens !== undefined
        ? recordContextAnchor(tx, head, { inputTokens: input.requestInputTokens, runId: input.runId, providerCallIndex: input.providerCallIndex })
        : Promise.resolve();
    return commitBehind(together(round, callIndex, anchored).then(([created]) => ({ round: created, existing: false })));
  });
}

export interface CommitToolResultInput {
  readonly runId: string;
  readonly roundId: string;
  readonly callId: string;
  readonly content: string;
  readonly isError: boolean;
}

export interface CommittedToolResult {
  readonly revisionId: string;
  readonly duplicate: boolean;
  readonly roundSettled: boolean;
  readonly completionSeq: number;
  readonly roundVersion: number;
  /** The pair (assistant tool call, tool result) as stored. */
  readonly appended: Message[];
  /** The run's begin count at the commit (see CommitToolResultResponse.begin_count). */
  readonly beginCount: number;
}

/** The adjacent pair for `call`; the round's non-tool-call parts and replay go on the first pair only. */
function resultPair(round: ToolRoundRow, call: ToolCallPart, first: boolean, content: string, isError: boolean): Message[] {
  const carried: ContentPart[] = first ? round.assistant.content.filter((part) => part.part.case !== "toolCall") : [];
  const assistant = create(AssistantMessageSchema, {
    content: [...carried, { part: { case: "toolCall", value: call } }],
    ...(first && round.assistant.replay ? { replay: round.assistant.replay } : {}),
  });
  return [
    create(MessageSchema, { body: { case: "assistant", value: assistant } }),
    create(MessageSchema, { body: { case: "toolResult", value: { callId: call.callId, toolName: call.name, content, isError } } }),
  ];
}

export function commitToolResult(pool: pg.Pool, input: CommitToolResultInput): Promise<Outcome<CommittedToolResult>> {
  if (input.roundId === "" || input.callId === "") return Promise.resolve(reject("invalid", "round_id and call_id are required"));
  return inTransaction<CommittedToolResult>(pool, async (tx) => {
    // One round trip (behind BEGIN): the locks (conversation, run, round), then the head, read behind them.
    const [locked, round, head] = await together(lockRunConversation(tx, input.runId), findRound(tx, input.runId, input.roundId, "lock"), findRunHead(tx, input.runId));
    if (locked.kind !== "ok") return locked;
    const { conversation, run } = locked.value;
    if (!round) return reject("not_found", `tool round ${input.roundId} of run ${input.runId} not found`);

    const earlier = round.results.find((r) => r.callId === input.callId);
    if (earlier) {
      return ok({
        revisionId: earlier.revisionId,
        duplicate: true,
        roundSettled: round.settled,
        completionSeq: earlier.completionSeq,
        roundVersion: round.version,
        appended: await loadRevisionOwnMessages(tx, earlier.revisionId),
        beginCount: run.beginCount,
      });
    }
    const call = round.calls.find((c) => c.callId === input.callId);
    if (!call) return reject("invalid", `tool round ${input.roundId} has no call ${JSON.stringify(input.callId)}`);
    const tip = roundTip(round);
    const refused = writeRejection(conversation, input.runId, tip ?? "");
    if (refused) return { kind: "rejected", rejection: refused };

    const completionSeq = round.results.length + 1;
    const pair = resultPair(round, call, completionSeq === 1, replaceNul(input.content), input.isError).map(canonicalMessage);
    // Not refused: the tip is the conversation's head.
    const parent = tip === null ? null : head;
    if (parent === undefined || (parent !== null && parent.id !== tip)) throw new Error(`tool round ${round.id} tip revision ${tip} not found`);
    // The head moves in the statement that appends; the result, the round's version and COMMIT go with it
    // (the second round trip).
    const append = prepareAppend({
      conversationId: conversation.id,
      parent,
      messages: pair,
      run: { runId: input.runId, appendKey: JSON.stringify(["result", input.roundId, input.callId]) },
    });
    const revision = append.revision;
    const settles = completionSeq === round.calls.length;
    const written = together(
      appendMovingRunHead(tx, append, { conversationId: conversation.id, runId: input.runId, providerCallIndex: round.providerCallIndex }),
      insertResult(
        tx,
        { runId: input.runId, roundId: round.id, callId: call.callId, completionSeq, content: replaceNul(input.content), isError: input.isError, revisionId: revision.id },
        settles,
      ),
    );
    return commitBehind(
      written.then(([, roundVersion]) => ({
        revisionId: revision.id,
        duplicate: false,
        roundSettled: settles,
        completionSeq,
        roundVersion,
        appended: pair.map((m) => m.message),
        beginCount: run.beginCount,
      })),
    );
  });
}

/** The run's unsettled round (with the results committed so far), or undefined. */
export function getOpenToolRound(pool: pg.Pool, runId: string): Promise<Outcome<ToolRoundRow | undefined>> {
  return inTransaction<ToolRoundRow | undefined>(pool, async (tx) => {
    const run = await findRun(tx, runId);
    if (!run) return reject("not_found", `run ${runId} not found`);
    return ok(await findOpenRound(tx, runId, "share"));
  });
}
