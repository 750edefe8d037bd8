/**
 * One tool round, from durable to settled (design/ARCHITECTURE.md §5.4). The
 * round is already persisted (tool_round.create) when it gets here. Then:
 * staged barrier -> ExecuteToolRound -> each ToolResult, in arrival order,
 * committed as a pair (tool_round.commit_result) and announced -> once every
 * call has a committed result, the settled barrier. The next model call starts
 * only after that barrier.
 *
 * `ToolRoundState` is the bookkeeping (which calls still need a result); the
 * driver does the I/O. Neither knows what a tool does: calls are call ids.
 */
import type { MessageInitShape } from "@bufbuild/protobuf";
import { CommitCause, type RunId, type StateCommitted, type StateCommittedSchema, type ToolCallPart, type ToolResult, type ToolRoundRecord } from "@byok/contracts";
import type { Logger } from "@byok/platform";
import type { StoreClient } from "@byok/store-client";
import { ABORTED } from "./abort.ts";
import type { RunCommandFeed } from "./run-commands.ts";
import { assertNever } from "./assert-never.ts";

/** What to do with an arriving tool result. */
export type ResultDisposition =
  | { readonly kind: "commit"; readonly call: ToolCallPart }
  | { readonly kind: "unknown_call" }
  | { readonly kind: "duplicate" };

export class ToolRoundState {
  readonly roundId: string;
  readonly #calls: readonly ToolCallPart[];
  readonly #done = new Set<string>();
  #version: number;
  #tipRevisionId: string;
  #settled: boolean;

  constructor(round: ToolRoundRecord) {
    this.roundId = round.roundId;
    this.#calls = round.calls;
    for (const result of round.results) this.#done.add(result.callId);
    this.#version = round.version;
    this.#tipRevisionId = round.headRevisionId;
    this.#settled = round.settled;
  }

  get settled(): boolean {
    return this.#settled;
  }

  get version(): number {
    return this.#version;
  }

  /** Revision after the last pair this worker knows of (the round's base when none). */
  get tipRevisionId(): string {
    return this.#tipRevisionId;
  }

  /** True when no result of the round is committed yet. */
  get untouched(): boolean {
    return this.#done.size === 0;
  }

  /** Calls without a committed result, in the model's order. */
  pendingCalls(): ToolCallPart[] {
    return this.#calls.filter((call) => !this.#done.has(call.callId));
  }

  classify(result: ToolResult): ResultDisposition {
    const call = this.#calls.find((c) => c.callId === result.callId);
    if (call === undefined) return { kind: "unknown_call" };
    if (this.#done.has(call.callId)) return { kind: "duplicate" };
    return { kind: "commit", call };
  }

  /** Record a committed result as the store reported it. */
  committed(callId: string, commit: { revisionId: string; version: number; settled: boolean; duplicate: boolean }): void {
    this.#done.add(callId);
    if (!commit.duplicate) this.#tipRevisionId = commit.revisionId;
    this.#version = Math.max(this.#version, commit.version);
    this.#settled = this.#settled || commit.settled;
  }
}

export type StateCommittedInit = MessageInitShape<typeof StateCommittedSchema>;

export interface ToolRoundDeps {
  readonly runId: RunId;
  readonly store: StoreClient;
  readonly commands: RunCommandFeed;
  readonly signal: AbortSignal;
  readonly log: Logger;
  /** A state event the client must acknowledge; throws when the run must stop. */
  commit(state: StateCommittedInit): Promise<void>;
  execute(roundId: string, calls: ToolCallPart[]): Promise<void>;
  /** Usage fields every StateCommitted carries (turn usage so far, context size). */
  usageSnapshot(): Pick<StateCommitted, "turnUsage" | "contextTokens">;
  /** Thrown when the run was cancelled while waiting for results. */
  interrupted(): Error;
  /** The run's begin count when this owner began it (its delivery). */
  readonly beginCount: number;
  /** Thrown when the store shows a later delivery of the same run began since: that one owns it now. */
  superseded(beginCount: number): Error;
}

/** Drives the round to settled; resolves with the revision after its last pair. */
export async function driveToolRound(deps: ToolRoundDeps, round: ToolRoundRecord): Promise<{ revisionId: string; version: number }> {
  const state = new ToolRoundState(round);
  const log = deps.log.child({ round_id: state.roundId });
  if (!state.settled) {
    if (state.untouched) {
      await deps.commit({
        cause: CommitCause.TOOL_ROUND_STAGED,
        revisionId: round.baseRevisionId,
        toolRoundVersion: state.version,
        roundId: state.roundId,
        ...(round.assistant === undefined ? {} : { pending: round.assistant }),
        ...deps.usageSnapshot(),
      });
    }
    const calls = state.pendingCalls();
    log.info({ calls: calls.length }, "tool round executing");
    await deps.execute(state.roundId, calls);
  }
  let duplicateSettled = false;
  while (!state.settled) {
    const result = await deps.commands.nextToolResult(deps.signal);
    if (result === ABORTED) throw deps.interrupted();
    const disposition = state.classify(result);
    switch (disposition.kind) {
      case "unknown_call":
        log.info({ call_id: result.callId }, "ignoring a tool result for a call outside this round");
        continue;
      case "duplicate":
        log.info({ call_id: result.callId }, "ignoring a repeated tool result");
        continue;
      case "commit":
        break;
      default:
        assertNever(disposition);
    }
    const commit = await deps.store.commitToolResult({
      runId: deps.runId,
      roundId: state.roundId,
      callId: result.callId,
      content: result.content,
      isError: result.isError,
    });
    // A redelivery of this run began while this owner waited for results (JetStream gave the run to
    // another worker, e.g. after a consumer leader change lost in-progress acks): it drives the run
    // from here; going on would make the next model call a second time.
    if (commit.beginCount > deps.beginCount) throw deps.superseded(commit.beginCount);
    state.committed(result.callId, { revisionId: commit.revisionId, version: commit.toolRoundVersion, settled: commit.roundSettled, duplicate: commit.duplicate });
    if (commit.duplicate) {
      // Another owner committed it first: the store kept the first pair.
      log.warn({ call_id: result.callId }, "tool result was already committed");
      duplicateSettled = duplicateSettled || commit.roundSettled;
      continue;
    }
    await deps.commit({
      cause: CommitCause.TOOL_RESULT,
      revisionId: commit.revisionId,
      toolRoundVersion: commit.toolRoundVersion,
      roundId: state.roundId,
      appended: commit.appended,
      ...deps.usageSnapshot(),
    });
  }
  // When the last commit was somebody else's, only the store knows the tip.
  let revisionId = state.tipRevisionId;
  if (duplicateSettled || round.settled) {
    const run = await deps.store.getRun(deps.runId);
    if (run.beginCount > deps.beginCount) throw deps.superseded(run.beginCount);
    revisionId = run.headRevisionId;
  }
  await deps.commit({
    cause: CommitCause.TOOL_ROUND_SETTLED,
    revisionId,
    toolRoundVersion: state.version,
    roundId: state.roundId,
    ...deps.usageSnapshot(),
  });
  log.info("tool round settled");
  return { revisionId, version: state.version };
}
