/**
 * Bus payloads larger than one NATS message may be. A NATS server refuses a
 * message over its max_payload (1 MiB unless configured otherwise), and what
 * the services send grows with the conversation: a ModelRequest carries the
 * whole history, revision.messages answers with it, a tool result carries a
 * whole file. Such a payload is stored in a JetStream object store bucket
 * (`names.payloadsBucket`, chunked by the object store) and the message
 * carries only its name in the PAYLOAD_REF_HEADER header, with an empty body.
 * The bucket is created on the first such payload, with the run streams'
 * replicas. The receiver of a request or reply reads it back and removes it; a message
 * kept in a stream (a PreparedRun, a run command) may be read again, so its
 * readers leave the payload, which expires after PAYLOAD_TTL_MS like the
 * streams' own messages. What no receiver read (its requester gave up)
 * expires the same way. The bucket refuses new payloads once full (discard new).
 *
 * A payload that fits travels inline as before, without any I/O here: the
 * check is one comparison, so the usual small messages pay nothing.
 */
import { randomUUID } from "node:crypto";
import { jetstreamManager, StorageType } from "@nats-io/jetstream";
import { Objm, type ObjectStore, type ObjectStoreOptions } from "@nats-io/obj";
import { headers as natsHeaders, type MsgHdrs, type NatsConnection } from "@nats-io/transport-node";
import type { BusNames } from "@byok/contracts";
import { autoStreamReplicas } from "./stream-replicas.ts";

/** Header naming the object that holds a message's payload. */
export const PAYLOAD_REF_HEADER = "Byok-Payload-Ref";
/** Room left in a message for its subject, reply subject and headers. */
export const PAYLOAD_HEADROOM_BYTES = 16 * 1024;
/** A stored payload is dropped after this long (the age limit of the RUNS and RUN_COMMANDS streams). */
export const PAYLOAD_TTL_MS = 60 * 60_000;
/**
 * Bytes the bucket may hold (read payloads are removed at once; those of stream messages stay their
 * hour). The server reserves it from its storage, like the run streams' limits.
 */
export const PAYLOADS_MAX_BYTES = 256 * 1024 * 1024;

export type PayloadFailureKind = "unreachable" | "missing";

/** A stored payload that cannot be written or read: "missing" = expired or never stored, "unreachable" = JetStream did not answer. */
export class PayloadFailure extends Error {
  override readonly name = "PayloadFailure";
  readonly kind: PayloadFailureKind;
  constructor(kind: PayloadFailureKind, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.kind = kind;
  }
}

/** What goes on the bus for a payload: the payload itself, or an empty body with the reference header. */
export interface OutgoingPayload {
  readonly data: Uint8Array;
  readonly headers: MsgHdrs | undefined;
}

/** The parts of a received NATS message a payload is read from. */
export interface ReceivedPayload {
  readonly data: Uint8Array;
  readonly headers?: MsgHdrs | undefined;
}

export interface BusPayloadsOptions {
  /** Largest payload sent inline (default: the server's max_payload less PAYLOAD_HEADROOM_BYTES). */
  readonly inlineLimit?: number;
}

const shared = new WeakMap<NatsConnection, Map<string, BusPayloads>>();

function bucketOptions(replicas: number): Partial<ObjectStoreOptions> {
  return { ttl: PAYLOAD_TTL_MS * 1_000_000, storage: StorageType.File, replicas, max_bytes: PAYLOADS_MAX_BYTES };
}

/**
 * The payload bucket, created on the first large payload of a deployment: a deployment whose payloads
 * always fit never has it. `replicas` as configured (JETSTREAM_REPLICAS, from ensureRunStreams), else as
 * the cluster suggests; with configured replicas an existing bucket is brought to them (another process
 * may have created it with the cluster's suggestion), since the payload of a stream's message must
 * outlive a node as the message does.
 */
async function openPayloadBucket(nc: NatsConnection, bucket: string, replicas: number | undefined): Promise<ObjectStore> {
  let store: ObjectStore;
  try {
    store = await new Objm(nc).create(bucket, bucketOptions(replicas ?? autoStreamReplicas(nc.info)));
  } catch (err) {
    // Another process created it at the same moment with other replicas: open it and set them below.
    if (!String((err as Error).message).includes("already in use")) throw err;
    store = await new Objm(nc).open(bucket);
  }
  if (replicas === undefined) return store;
  const jsm = await jetstreamManager(nc);
  const stream = `OBJ_${bucket}`;
  const info = await jsm.streams.info(stream);
  if (info.config.num_replicas !== replicas) await jsm.streams.update(stream, { ...info.config, num_replicas: replicas });
  return store;
}

export class BusPayloads {
  readonly #nc: NatsConnection;
  readonly #bucket: string;
  readonly #inlineLimit: number | undefined;
  /** Configured replicas of the run streams (undefined: as the cluster suggests). */
  #replicas: number | undefined;
  #store: Promise<ObjectStore> | undefined;

  constructor(nc: NatsConnection, names: BusNames, options: BusPayloadsOptions = {}) {
    this.#nc = nc;
    this.#bucket = names.payloadsBucket;
    this.#inlineLimit = options.inlineLimit;
  }

  /** The run streams' configured replicas, for the bucket when this process creates it (ensureRunStreams). */
  useReplicas(replicas: number | undefined): void {
    this.#replicas = replicas;
  }

  /** Largest payload that travels inline. */
  get inlineLimit(): number {
    return this.#inlineLimit ?? (this.#nc.info?.max_payload ?? 1024 * 1024) - PAYLOAD_HEADROOM_BYTES;
  }

  /** Whether `data` is too large to travel inline. */
  tooLarge(data: Uint8Array): boolean {
    return data.length > this.inlineLimit;
  }

  /** `data` as it goes on the bus: inline when it fits, else stored and referenced. */
  async outgoing(data: Uint8Array): Promise<OutgoingPayload> {
    if (!this.tooLarge(data)) return { data, headers: undefined };
    const name = randomUUID();
    try {
      const store = await this.#open();
      await store.putBlob({ name }, data);
    } catch (cause) {
      throw new PayloadFailure("unreachable", `cannot store a payload of ${data.length} bytes: ${(cause as Error).message}`, { cause });
    }
    const headers = natsHeaders();
    headers.set(PAYLOAD_REF_HEADER, name);
    return { data: new Uint8Array(0), headers };
  }

  /** Whether a received message references a stored payload. */
  static isReference(msg: ReceivedPayload): boolean {
    return msg.data.length === 0 && msg.headers?.has(PAYLOAD_REF_HEADER) === true;
  }

  /**
   * The payload of a received message: its data, or the stored payload it names, removed once read
   * unless `keep` (a stream's message, which may be read again).
   */
  async incoming(msg: ReceivedPayload, options: { keep?: boolean } = {}): Promise<Uint8Array> {
    if (!BusPayloads.isReference(msg)) return msg.data;
    const name = msg.headers!.get(PAYLOAD_REF_HEADER);
    let data: Uint8Array | null;
    let store: ObjectStore;
    try {
      store = await this.#open();
      data = await store.getBlob(name);
    } catch (cause) {
      throw new PayloadFailure("unreachable", `cannot read stored payload ${name}: ${(cause as Error).message}`, { cause });
    }
    if (data === null) throw new PayloadFailure("missing", `stored payload ${name} is gone (expired after ${PAYLOAD_TTL_MS / 60_000} min or never stored)`);
    if (options.keep === true) return data;
    // A payload that cannot be removed now expires on its own.
    store.delete(name).catch(() => undefined);
    return data;
  }

  /** One instance per connection and bucket, so that the bucket is opened once per process. */
  static of(nc: NatsConnection, names: BusNames): BusPayloads {
    let byBucket = shared.get(nc);
    if (byBucket === undefined) shared.set(nc, (byBucket = new Map()));
    let payloads = byBucket.get(names.payloadsBucket);
    if (payloads === undefined) byBucket.set(names.payloadsBucket, (payloads = new BusPayloads(nc, names)));
    return payloads;
  }

  #open(): Promise<ObjectStore> {
    this.#store ??= openPayloadBucket(this.#nc, this.#bucket, this.#replicas)
      .catch((err: unknown) => {
        this.#store = undefined;
        throw err;
      });
    return this.#store;
  }
}
