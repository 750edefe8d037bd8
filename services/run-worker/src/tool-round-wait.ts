/**
 * The engine's tool-round step: drives the round to settled (tool-round.ts)
 * while probing the client, since nothing but the client bounds the wait for
 * tool results. Once the client is gone, the wait ends and the run is cancelled.
 */
import type { RunId, ToolRoundRecord } from "@byok/contracts";
import type { Logger } from "@byok/platform";
import type { StoreClient } from "@byok/store-client";
import type { ClientChannel } from "./client-channel.ts";
import { watchClientLiveness } from "./client-liveness.ts";
import type { RunCommandFeed } from "./run-commands.ts";
import { RunInterrupted, RunStop, RunSuperseded, settleBarrier } from "./run-stop.ts";
import { driveToolRound, type ToolRoundDeps } from "./tool-round.ts";

export interface ToolRoundWaitDeps extends Pick<ToolRoundDeps, "commit" | "usageSnapshot"> {
  readonly runId: RunId;
  readonly store: StoreClient;
  readonly client: ClientChannel;
  readonly commands: RunCommandFeed;
  /** The run's cancellation signal. */
  readonly signal: AbortSignal;
  readonly probeIntervalMs: number;
  readonly log: Logger;
  readonly beginCount: number;
}

/** Resolves with the revision the settled round left the run at. */
export async function awaitToolRound(deps: ToolRoundWaitDeps, round: ToolRoundRecord): Promise<string> {
  const { signal, client, log } = deps;
  const waiting = new AbortController();
  const abortWaiting = (): void => waiting.abort();
  signal.addEventListener("abort", abortWaiting, { once: true });
  if (signal.aborted) waiting.abort();
  let goneReason: string | undefined;
  const liveness = watchClientLiveness(client, deps.probeIntervalMs, log);
  void liveness.gone.then((reason) => {
    goneReason = reason;
    waiting.abort();
  });
  try {
    const settled = await driveToolRound(
      {
        runId: deps.runId,
        store: deps.store,
        commands: deps.commands,
        signal: waiting.signal,
        log,
        commit: deps.commit,
        execute: async (roundId, calls) =>
          settleBarrier(await client.barrier({ event: { case: "executeToolRound", value: { roundId, calls } } }, signal), "execute_tool_round", log),
        usageSnapshot: deps.usageSnapshot,
        interrupted: () =>
          goneReason !== undefined && !signal.aborted
            ? new RunStop({ kind: "cancelled", reason: `client gone: ${goneReason}` })
            : new RunInterrupted("cancelled while waiting for tool results"),
        beginCount: deps.beginCount,
        superseded: (current) => new RunSuperseded(deps.beginCount, current),
      },
      round,
    );
    return settled.revisionId;
  } finally {
    liveness.stop();
    signal.removeEventListener("abort", abortWaiting);
  }
}
