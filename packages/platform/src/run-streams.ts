/**
 * The two JetStream streams of the run bus. Both the adapter (publisher) and the
 * run workers (consumers) ensure them at start-up with the same configuration,
 * so whichever starts first creates them.
 */
import { jetstreamManager, RetentionPolicy, StorageType, type StreamConfig } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import type { BusNames } from "@byok/contracts";

const HOUR_NS = 3_600_000_000_000;
const TWO_MINUTES_NS = 120_000_000_000;

export function runStreamConfigs(names: BusNames): Array<Partial<StreamConfig> & { name: string }> {
  return [
    {
      name: names.runsStream,
      subjects: [names.runStart],
      retention: RetentionPolicy.Workqueue,
      storage: StorageType.File,
      duplicate_window: TWO_MINUTES_NS,
    },
    {
      name: names.commandsStream,
      subjects: [names.allRunCommands],
      retention: RetentionPolicy.Limits,
      storage: StorageType.File,
      max_age: HOUR_NS,
      duplicate_window: TWO_MINUTES_NS,
    },
  ];
}

export async function ensureRunStreams(nc: NatsConnection, names: BusNames): Promise<void> {
  const jsm = await jetstreamManager(nc);
  for (const config of runStreamConfigs(names)) {
    try {
      await jsm.streams.info(config.name);
      await jsm.streams.update(config.name, config);
    } catch (err) {
      if (!isStreamNotFound(err)) throw err;
      try {
        await jsm.streams.add(config);
      } catch (addErr) {
        // Another process created it between our info() and add(): fine.
        if (!String((addErr as Error).message).includes("already in use")) throw addErr;
      }
    }
  }
}

function isStreamNotFound(err: unknown): boolean {
  const text = String((err as Error)?.message ?? err);
  return text.includes("stream not found") || (err as { name?: string })?.name === "StreamNotFoundError";
}
