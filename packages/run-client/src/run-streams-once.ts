/**
 * The run JetStream streams, created or updated once per adapter before its
 * first publish (and tried again after a failure): `ensure()` resolves when
 * they exist, or throws BusPublishError.
 */
import type { BusNames } from "@byok/contracts";
import { ensureRunStreams, type NatsConnection } from "@byok/platform";
import { BusPublishError } from "./run-bus.ts";

export type EnsureRunStreams = () => Promise<void>;

export function runStreamsOnce(nc: NatsConnection, names: BusNames): EnsureRunStreams {
  let streams: Promise<void> | undefined;
  return () => {
    streams ??= ensureRunStreams(nc, names).catch((cause: unknown) => {
      streams = undefined;
      throw new BusPublishError(`cannot set up the run streams: ${(cause as Error).message}`, { cause });
    });
    return streams;
  };
}
