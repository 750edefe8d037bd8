/**
 * Context anchors: a model call's request was built from a revision's history
 * and the provider reported its input tokens. Written with the call's result
 * (run.append / tool_round.create), read with a revision's history (revisions.ts, in the same query): the newest
 * anchor of the chain lets the run worker estimate only what came after it.
 */
import { preparedQuery, type Transaction } from "./database.ts";
import type { RevisionRow } from "./revisions.ts";

export interface ContextAnchorRow {
  readonly revisionId: string;
  readonly messageCount: number;
  readonly inputTokens: bigint;
}

/** Records the anchor of `revision` (first measurement wins: a repeat changes nothing). */
export async function recordContextAnchor(
  tx: Transaction,
  revision: RevisionRow,
  measured: { readonly inputTokens: bigint; readonly runId: string; readonly providerCallIndex: number },
): Promise<void> {
  await preparedQuery(
    tx,
    `INSERT INTO context_anchors (revision_id, message_count, input_tokens, run_id, provider_call_index)
     VALUES ($1, $2, $3, $4, $5) ON CONFLICT (revision_id) DO NOTHING`,
    [revision.id, revision.messageCount, measured.inputTokens.toString(), measured.runId, measured.providerCallIndex],
  );
}
