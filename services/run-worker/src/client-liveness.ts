/**
 * Is the client (the adapter serving the run's Cursor stream) still there?
 * The design says a run whose client is gone is cancelled; barriers find that
 * out by themselves (they are requests with a timeout), but waiting for tool
 * results has no request to fail. So while the run owner waits, it probes the
 * state subject (StateEvent{probe}) every interval:
 *
 * - ok:false: the client's stream has ended: gone at once;
 * - no responders: gone when the next probe, after a short pause, finds nobody
 *   either (one miss can be a reconnect race after a NATS restart, where the
 *   worker's connection is back before the adapter's subscription);
 * - no answer (timeout, transport error): gone after MAX_UNANSWERED in a row.
 */
import type { Logger } from "@byok/platform";
import type { ClientChannel, ProbeOutcome } from "./client-channel.ts";
import { assertNever } from "./assert-never.ts";

/** Consecutive unanswered probes after which the client counts as gone. */
export const MAX_UNANSWERED = 3;
/** Pause before the probe that confirms "no responders" (longer than a NATS reconnect). */
const CONFIRM_DELAY_MS = 2_000;

export interface ClientLiveness {
  /** Resolves with the reason once the client is gone; never rejects. */
  readonly gone: Promise<string>;
  stop(): void;
}

export type Prober = Pick<ClientChannel, "probe">;

/** Probes every `intervalMs` (each probe waits at most that long) until stopped or the client is gone. */
export function watchClientLiveness(client: Prober, intervalMs: number, log: Logger): ClientLiveness {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let wake: (() => void) | undefined;
  const pause = (ms: number): Promise<void> =>
    new Promise((resolve) => {
      wake = resolve;
      timer = setTimeout(resolve, ms);
    });

  const gone = (async (): Promise<string> => {
    const misses = new MissCounter();
    let next = intervalMs;
    for (;;) {
      await pause(next);
      if (stopped) return new Promise<string>(() => undefined);
      const outcome = await client.probe(intervalMs);
      if (stopped) return new Promise<string>(() => undefined);
      const verdict = misses.record(outcome);
      if (verdict.kind === "gone") {
        log.warn({ probe: outcome.kind }, "client gone while the run waits for it");
        return verdict.reason;
      }
      if (outcome.kind !== "alive") log.info({ probe: outcome.kind }, "client did not answer a liveness probe");
      next = outcome.kind === "no_responders" ? CONFIRM_DELAY_MS : intervalMs;
    }
  })();

  return {
    gone,
    stop() {
      stopped = true;
      clearTimeout(timer);
      wake?.();
    },
  };
}

/**
 * One probe now, confirmed once after a short pause when nobody responds:
 * the reason when the client is gone, undefined when it is (or may be) there.
 */
export async function clientGoneNow(client: Prober, timeoutMs: number): Promise<string | undefined> {
  const misses = new MissCounter();
  for (let probes = 0; probes < 2; probes++) {
    const outcome = await client.probe(timeoutMs);
    const verdict = misses.record(outcome);
    if (verdict.kind === "gone") return verdict.reason;
    if (outcome.kind !== "no_responders") return undefined;
    await new Promise((resolve) => setTimeout(resolve, CONFIRM_DELAY_MS));
  }
  return undefined;
}

type Verdict = { readonly kind: "gone"; readonly reason: string } | { readonly kind: "unknown" };

/** The rules above, over consecutive probe outcomes. */
export class MissCounter {
  #noResponders = 0;
  #unanswered = 0;

  record(outcome: ProbeOutcome): Verdict {
    switch (outcome.kind) {
      case "alive":
        this.#noResponders = 0;
        this.#unanswered = 0;
        return { kind: "unknown" };
      case "ended":
        return { kind: "gone", reason: `the client's stream has ended (${outcome.error})` };
      case "no_responders":
        this.#noResponders += 1;
        this.#unanswered = 0;
        return this.#noResponders >= 2 ? { kind: "gone", reason: "no client is listening" } : { kind: "unknown" };
      case "no_answer":
        this.#unanswered += 1;
        this.#noResponders = 0;
        return this.#unanswered >= MAX_UNANSWERED ? { kind: "gone", reason: `${MAX_UNANSWERED} liveness probes unanswered (${outcome.reason})` } : { kind: "unknown" };
      default:
        return assertNever(outcome, "probe outcome");
    }
  }
}
