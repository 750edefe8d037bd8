/**
 * How the run loop (engine.ts) ends early: RunStop carries an outcome decided
 * inside the loop; RunInterrupted and RunSuperseded leave the decision to the
 * actor (run-actor.ts). settleBarrier maps a client barrier's outcome onto them.
 */
import { FailureKind } from "@byok/contracts";
import type { Logger } from "@byok/platform";
import { assertNever } from "./assert-never.ts";
import type { BarrierOutcome } from "./client-channel.ts";
import { failed, type RunOutcome } from "./run-outcome.ts";

/** Ends the loop with an outcome decided inside it (client gone, client rejected a state). */
export class RunStop extends Error {
  override readonly name = "RunStop";
  readonly outcome: RunOutcome;
  constructor(outcome: RunOutcome) {
    super(outcome.kind);
    this.outcome = outcome;
  }
}

/** The run's cancellation signal fired; the actor decides what that means. */
export class RunInterrupted extends Error {
  override readonly name = "RunInterrupted";
}

/**
 * A later delivery of the same run began (the store's begin count grew past
 * this owner's): that delivery owns the run now. This one stops without
 * ending the run, reporting anything or settling the JetStream message.
 */
export class RunSuperseded extends Error {
  override readonly name = "RunSuperseded";
  readonly beginCount: number;
  readonly currentBeginCount: number;
  constructor(beginCount: number, currentBeginCount: number) {
    super(`run begun again (begin ${currentBeginCount}) while this owner (begin ${beginCount}) ran it`);
    this.beginCount = beginCount;
    this.currentBeginCount = currentBeginCount;
  }
}

/** Returns when the client acknowledged `what`; otherwise throws RunStop or RunInterrupted. */
export function settleBarrier(outcome: BarrierOutcome, what: string, log: Logger): void {
  switch (outcome.kind) {
    case "acked":
      return;
    case "rejected":
      log.warn({ error: outcome.error }, `client rejected ${what}`);
      throw new RunStop(failed(FailureKind.CLIENT, `client could not apply ${what}: ${outcome.error}`));
    case "client_gone":
      log.warn({ reason: outcome.reason }, `client did not acknowledge ${what}`);
      throw new RunStop({ kind: "cancelled", reason: `client gone: ${outcome.reason}` });
    case "aborted":
      throw new RunInterrupted(`cancelled while waiting for the client to acknowledge ${what}`);
    default:
      assertNever(outcome);
  }
}
