/**
 * Caller liveness for one model call. A caller that dies (a run worker killed
 * mid-stream) leaves its reply inbox without a subscriber, but the frames the
 * gateway publishes there are fire-and-forget: nobody tells the gateway, and
 * the upstream request would run (and spend tokens) until the endpoint is
 * done. So every `intervalMs` the gateway sends a probe to the inbox (a
 * request with the CALLER_PROBE_HEADER header and an empty body, not a
 * ModelEvent); the caller answers it. When nobody responds twice in a row
 * (the second probe after a short pause, so that a caller reconnecting after
 * a NATS restart is not mistaken for a dead one), the caller is gone.
 * A probe without an answer (timeout) says nothing either way.
 */
import { headers, NoRespondersError, type NatsConnection } from "@nats-io/transport-node";
import { CALLER_PROBE_HEADER } from "@byok/contracts";
import type { Logger } from "@byok/platform";

/** Pause before the probe that confirms "no responders" (longer than a NATS reconnect). */
const CONFIRM_DELAY_MS = 2_000;

export interface CallerProbe {
  stop(): void;
}

export function probeCaller(nc: NatsConnection, inbox: string, intervalMs: number, onGone: () => void, log: Logger): CallerProbe {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let noResponders = 0;

  const schedule = (ms: number): void => {
    timer = setTimeout(() => void probe(), ms);
  };
  const probe = async (): Promise<void> => {
    if (stopped) return;
    const probeHeaders = headers();
    probeHeaders.set(CALLER_PROBE_HEADER, "1");
    try {
      await nc.request(inbox, new Uint8Array(0), { timeout: intervalMs, headers: probeHeaders });
      noResponders = 0;
    } catch (error) {
      if (error instanceof NoRespondersError || (error as Error)?.cause instanceof NoRespondersError) {
        noResponders += 1;
      } else {
        noResponders = 0;
        log.debug({ err: error }, "caller probe unanswered");
      }
    }
    if (stopped) return;
    if (noResponders >= 2) {
      log.warn("the caller of the model call is gone; aborting the upstream request");
      stopped = true;
      onGone();
      return;
    }
    schedule(noResponders > 0 ? CONFIRM_DELAY_MS : intervalMs);
  };

  schedule(intervalMs);
  return {
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
  };
}
