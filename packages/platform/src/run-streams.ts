/**
 * The JetStream streams of the run bus. Both the adapter (publisher) and the
 * run workers (consumers) ensure them at start-up with the same configuration,
 * so whichever starts first creates them.
 *
 * Replicas: JETSTREAM_REPLICAS (1 or 3) when set, and an existing stream is
 * brought to that count. Unset: 3 when the NATS server reports a cluster of at
 * least three servers (its INFO names a cluster and lists three or more client
 * URLs), else 1; an existing stream keeps the replicas it has, so a service
 * that starts while a node is away never scales a stream down. The workers'
 * durable consumer follows its stream's replicas; the per-run command readers
 * are ordered consumers, which the client re-creates after a node is lost.
 * (A cluster whose servers do not advertise their client URLs looks like one
 * server here: set JETSTREAM_REPLICAS=3 there.)
 *
 * Limits: what JetStream keeps for runs is bounded in age and size. A
 * PreparedRun no worker took within an hour is dropped (its client gave up
 * long before), and a full run queue (RUNS_MAX_BYTES) refuses new runs
 * (discard new: the adapter reports the publish failure) instead of dropping
 * queued ones. Commands are kept an hour (a run that takes longer re-reads
 * from what is left: applying them is idempotent and the committed ones are in
 * the store); past RUN_COMMANDS_MAX_BYTES the oldest go first.
 *
 * The bus payload bucket (bus-payloads.ts) gets the same replicas when this
 * process creates it (on its first large payload): a run command's or
 * PreparedRun's payload must survive what its message survives.
 *
 * TOOL_SETS holds the prompt tool sets runs refer to by digest (tool-sets.ts):
 * one message per set, kept without an age limit, and refused once full.
 *
 * RUNS_TAKEN holds one empty marker per run a worker took (published only if
 * the run's subject has none yet), so a worker knows, one JetStream round trip
 * after it took a run, whether any delivery took it before: JetStream's own
 * delivery count is not reliable for that (see run-worker's
 * early-model-call.ts). Kept a day; only the first marker of a run is stored.
 */
import { DiscardPolicy, jetstreamManager, RetentionPolicy, StorageType, type StreamConfig } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import type { BusNames } from "@byok/contracts";
import { BusPayloads } from "./bus-payloads.ts";
import { autoStreamReplicas } from "./stream-replicas.ts";

const HOUR_NS = 3_600_000_000_000;
const TWO_MINUTES_NS = 120_000_000_000;
const MIB = 1024 * 1024;
/**
 * Bytes of queued PreparedRuns (each ~15 KB: some 4,000 waiting runs). The
 * server reserves a stream's max_bytes from its storage at creation, so these
 * stay modest (several deployments or test prefixes share one server).
 */
export const RUNS_MAX_BYTES = 64 * MIB;
/** Bytes of run commands (tool results included). */
export const RUN_COMMANDS_MAX_BYTES = 256 * MIB;
/**
 * Bytes of stored prompt tool sets (about 17 KB for Cursor's agent tools: some
 * 900 distinct sets). Full, the stream refuses new sets and their runs carry
 * the tools inline; sets are never removed, so a digest once stored stays
 * resolvable (packages/platform/src/tool-sets.ts).
 */
export const TOOL_SETS_MAX_BYTES = 16 * MIB;
/** Bytes of taken-run markers (about 100 bytes each with the stream's overhead). */
export const RUNS_TAKEN_MAX_BYTES = 16 * MIB;
const DAY_NS = 24 * HOUR_NS;

export interface RunStreamOptions {
  /** Configured replicas (JETSTREAM_REPLICAS); undefined = decided from the cluster. */
  readonly replicas?: number | undefined;
}

export function runStreamConfigs(names: BusNames, replicas = 1): Array<Partial<StreamConfig> & { name: string }> {
  return [
    {
      name: names.runsStream,
      subjects: [names.runStart],
      retention: RetentionPolicy.Workqueue,
      storage: StorageType.File,
      max_age: HOUR_NS,
      max_bytes: RUNS_MAX_BYTES,
      discard: DiscardPolicy.New,
      duplicate_window: TWO_MINUTES_NS,
      num_replicas: replicas,
    },
    {
      name: names.commandsStream,
      subjects: [names.allRunCommands],
      retention: RetentionPolicy.Limits,
      storage: StorageType.File,
      max_age: HOUR_NS,
      max_bytes: RUN_COMMANDS_MAX_BYTES,
      discard: DiscardPolicy.Old,
      duplicate_window: TWO_MINUTES_NS,
      num_replicas: replicas,
    },
    {
      name: names.runsTakenStream,
      subjects: [names.allRunsTaken],
      retention: RetentionPolicy.Limits,
      storage: StorageType.File,
      max_age: DAY_NS,
      max_bytes: RUNS_TAKEN_MAX_BYTES,
      max_msgs_per_subject: 1,
      discard: DiscardPolicy.Old,
      num_replicas: replicas,
    },
    {
      name: names.toolSetsStream,
      subjects: [names.allToolSets],
      retention: RetentionPolicy.Limits,
      storage: StorageType.File,
      max_bytes: TOOL_SETS_MAX_BYTES,
      max_msgs_per_subject: 1,
      discard: DiscardPolicy.New,
      duplicate_window: TWO_MINUTES_NS,
      num_replicas: replicas,
    },
  ];
}

export async function ensureRunStreams(nc: NatsConnection, names: BusNames, options: RunStreamOptions = {}): Promise<void> {
  const jsm = await jetstreamManager(nc);
  const replicas = options.replicas ?? autoStreamReplicas(nc.info);
  for (const config of runStreamConfigs(names, replicas)) {
    try {
      const existing = await jsm.streams.info(config.name);
      const keep = options.replicas === undefined ? { num_replicas: existing.config.num_replicas } : {};
      await jsm.streams.update(config.name, { ...config, ...keep });
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
  BusPayloads.of(nc, names).useReplicas(options.replicas);
}

function isStreamNotFound(err: unknown): boolean {
  const text = String((err as Error)?.message ?? err);
  return text.includes("stream not found") || (err as { name?: string })?.name === "StreamNotFoundError";
}
