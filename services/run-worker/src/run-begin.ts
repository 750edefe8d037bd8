/**
 * run.begin as the run actor sends it (run-actor.ts): the run takes the
 * conversation over and writes its start revision in one store round trip,
 * answered with the head's history (only what is new when this worker held the
 * conversation before) and, on a redelivery, the open tool round. A run it
 * superseded is told to stop through its command stream; the store already
 * recorded it cancelled.
 */
import type { JetStreamClient } from "@nats-io/jetstream";
import { isRunId, type BusNames, type PreparedRun, type RunId } from "@byok/contracts";
import type { Logger } from "@byok/platform";
import type { BegunRun, StoreClient } from "@byok/store-client";
import type { RecentHistories } from "./recent-histories.ts";
import { sendCancel } from "./run-commands.ts";

export interface RunBeginPorts {
  readonly store: StoreClient;
  readonly js: JetStreamClient;
  readonly names: BusNames;
  readonly recent: RecentHistories;
}

export async function beginRun(ports: RunBeginPorts, runId: RunId, prepared: PreparedRun, log: Logger): Promise<BegunRun> {
  const action = prepared.action;
  const begun = await ports.store.beginRun(
    {
      runId,
      conversationId: prepared.conversationId,
      memberId: prepared.memberId,
      baseRevisionId: prepared.baseRevisionId,
      initialMessages: action.case === "start" ? action.value.initialMessages : [],
      onceClientIds: action.case === "start" ? action.value.onceClientIds : [],
      parentRunId: prepared.parentRunId,
      parentToolCallId: prepared.parentToolCallId,
      modelId: prepared.model?.modelId ?? "",
      withHistory: true,
    },
    ports.recent.get(prepared.conversationId),
  );
  if (begun.supersededRunId !== "") cancelSuperseded(ports, begun.supersededRunId, runId, log);
  if (begun.duplicateOfRunId !== "") log.info({ duplicate_of_run_id: begun.duplicateOfRunId }, "the start was applied before; the run completed without doing anything");
  return begun;
}

/** The store already marked the old run cancelled; tell its owner to stop now. */
function cancelSuperseded(ports: RunBeginPorts, oldRunId: string, newRunId: RunId, log: Logger): void {
  if (!isRunId(oldRunId)) {
    log.warn({ superseded_run_id: oldRunId }, "the superseded run's id is not a run id; no cancel sent");
    return;
  }
  sendCancel(ports.js, ports.names, oldRunId, `superseded by run ${newRunId}`)
    .then(() => log.info({ superseded_run_id: oldRunId }, "cancelled the superseded run"))
    .catch((err: unknown) => log.warn({ err, superseded_run_id: oldRunId }, "could not send cancel to the superseded run"));
}
