/**
 * Prompt tool sets by digest. A run's PromptSpec carries its tool definitions
 * (Cursor's agent tools are about 17 KB of JSON Schema), the same set on run
 * after run. Instead of sending them with every PreparedRun and every
 * ModelRequest, a sender stores each distinct set once in the TOOL_SETS stream
 * (one message, its subject named by the set's SHA-256) and sends the digest
 * (`PromptSpec.tools_digest`) without the tools. A receiver resolves the
 * digest from its own cache, else from the stream.
 *
 * - A sender replaces the tools by the digest only after the stream stored the
 *   set (or once did, in this process): a receiver can always resolve it. When
 *   the stream refuses (full, unreachable), the tools travel inline, as before;
 *   every receiver takes both forms.
 * - Sets are never removed from the stream (it has no age limit and refuses new
 *   sets once full), so a stored digest stays resolvable for every run that
 *   names it, also after a restart or on another instance.
 * - Decoded sets are cached per process (the most recently used
 *   CACHED_SETS); the cached tool definitions are shared between runs and never
 *   changed.
 */
import { createHash } from "node:crypto";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { BinaryWriter, WireType } from "@bufbuild/protobuf/wire";
import { jetstream, jetstreamManager, type JetStreamManager } from "@nats-io/jetstream";
import { LRUCache } from "lru-cache";
import type { NatsConnection } from "@nats-io/transport-node";
import { PromptSpecSchema, ToolDefinitionSchema, ToolSetSchema, type BusNames, type PromptSpec, type ToolDefinition } from "@byok/contracts";
import type { Logger } from "./logger.ts";

/** Where the sets are stored: the TOOL_SETS stream (`natsToolSetStore`), or a stand-in in unit tests. */
export interface ToolSetStore {
  /** Stores an encoded set under its digest; rejects when the store refuses it. */
  put(digestHex: string, encoded: Uint8Array): Promise<void>;
  /** The encoded set stored under the digest; undefined when there is none. */
  get(digestHex: string): Promise<Uint8Array | undefined>;
}

export type ToolSetFailureKind =
  /** The store holds no set under the digest (it was never stored there, or the stream was removed). */
  | "unknown"
  /** The store could not be read; a later try may succeed. */
  | "unreachable";

export class ToolSetFailure extends Error {
  override readonly name = "ToolSetFailure";
  readonly kind: ToolSetFailureKind;

  constructor(kind: ToolSetFailureKind, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.kind = kind;
  }
}

/** Distinct sets a process keeps decoded. */
const CACHED_SETS = 64;

/** Each tool's encoding, made once per ToolDefinition object (a builder's catalog tools are the same objects run after run). */
const encodedTools = new WeakMap<ToolDefinition, Uint8Array>();

/** The ToolSet message of `tools`, encoded: byte for byte what toBinary(ToolSetSchema) gives, from each tool's cached encoding. */
export function encodeToolSet(tools: readonly ToolDefinition[]): Uint8Array {
  const writer = new BinaryWriter();
  for (const tool of tools) {
    let encoded = encodedTools.get(tool);
    if (encoded === undefined) {
      encoded = toBinary(ToolDefinitionSchema, tool);
      encodedTools.set(tool, encoded);
    }
    // `repeated ToolDefinition tools = 1`: each tool is field 1, length-delimited.
    writer.tag(1, WireType.LengthDelimited).bytes(encoded);
  }
  return writer.finish();
}

export function toolSetDigestHex(digest: Uint8Array): string {
  return Buffer.from(digest.buffer, digest.byteOffset, digest.byteLength).toString("hex");
}

/** An encoded set's digest (`PromptSpec.tools_digest`). */
function digestOf(encoded: Uint8Array): Uint8Array {
  return new Uint8Array(createHash("sha256").update(encoded).digest());
}

/**
 * The form a resolved spec travels in: without its tools when it names a
 * stored set (a run worker forwarding a run's prompt to the provider gateway),
 * as it is otherwise.
 */
export function promptForWire(spec: PromptSpec): PromptSpec {
  if (spec.toolsDigest.length === 0 || spec.tools.length === 0) return spec;
  return create(PromptSpecSchema, { mode: spec.mode, systemText: spec.systemText, toolsDigest: spec.toolsDigest });
}

export class ToolSets {
  readonly #store: ToolSetStore;
  readonly #log: Logger;
  /** Digest (hex) -> the decoded tools of a set this process resolved. */
  readonly #cache = new LRUCache<string, readonly ToolDefinition[]>({ max: CACHED_SETS });
  /** Digests of this process's sets that the store holds (stored here, or read from it). */
  readonly #stored = new Set<string>();
  readonly #storing = new Map<string, Promise<boolean>>();
  readonly #fetching = new Map<string, Promise<readonly ToolDefinition[]>>();

  constructor(store: ToolSetStore, log: Logger) {
    this.#store = store;
    this.#log = log;
  }

  /**
   * The spec to send: its tools replaced by their digest once the store holds
   * the set (stored on first use in this process); unchanged when it has no
   * tools, or when the store refuses the set (then the tools travel inline).
   */
  async forWire(spec: PromptSpec): Promise<PromptSpec> {
    if (spec.tools.length === 0) return spec;
    const encoded = encodeToolSet(spec.tools);
    const digest = digestOf(encoded);
    const hex = toolSetDigestHex(digest);
    if (!this.#stored.has(hex) && !(await this.#storeOnce(hex, encoded))) return spec;
    return create(PromptSpecSchema, { mode: spec.mode, systemText: spec.systemText, toolsDigest: digest });
  }

  /**
   * The spec with its tools: as it came when it carries them, else the set its
   * digest names, from the cache or the store. Rejects with a ToolSetFailure
   * when the set cannot be had.
   */
  async resolve(spec: PromptSpec): Promise<PromptSpec> {
    if (spec.toolsDigest.length === 0 || spec.tools.length > 0) return spec;
    const hex = toolSetDigestHex(spec.toolsDigest);
    const tools = this.#cache.get(hex) ?? (await this.#fetch(hex));
    return create(PromptSpecSchema, { mode: spec.mode, systemText: spec.systemText, tools: tools as ToolDefinition[], toolsDigest: spec.toolsDigest });
  }

  /** Stores a set once per process (concurrent first uses share one put); false when the store refused it. */
  #storeOnce(hex: string, encoded: Uint8Array): Promise<boolean> {
    let storing = this.#storing.get(hex);
    if (storing === undefined) {
      storing = this.#store.put(hex, encoded).then(
        () => {
          this.#stored.add(hex);
          return true;
        },
        (err: unknown) => {
          this.#log.warn({ err, tool_set: hex }, "tool set not stored; its runs carry the tools inline");
          return false;
        },
      );
      this.#storing.set(hex, storing);
      // A refused set is tried again by the next run.
      void storing.finally(() => this.#storing.delete(hex));
    }
    return storing;
  }

  #fetch(hex: string): Promise<readonly ToolDefinition[]> {
    let fetching = this.#fetching.get(hex);
    if (fetching === undefined) {
      fetching = this.#read(hex);
      this.#fetching.set(hex, fetching);
      void fetching.then(
        () => this.#fetching.delete(hex),
        () => this.#fetching.delete(hex),
      );
    }
    return fetching;
  }

  async #read(hex: string): Promise<readonly ToolDefinition[]> {
    let encoded: Uint8Array | undefined;
    try {
      encoded = await this.#store.get(hex);
    } catch (err) {
      throw new ToolSetFailure("unreachable", `tool set ${hex} could not be read: ${(err as Error).message}`, { cause: err });
    }
    if (encoded === undefined) throw new ToolSetFailure("unknown", `no tool set ${hex} is stored`);
    const actual = toolSetDigestHex(digestOf(encoded));
    if (actual !== hex) throw new ToolSetFailure("unknown", `the tool set stored as ${hex} has the digest ${actual}`);
    const tools = fromBinary(ToolSetSchema, encoded).tools;
    this.#stored.add(hex);
    this.#cache.set(hex, tools);
    return tools;
  }
}

/** The TOOL_SETS stream (run-streams.ts) as a ToolSetStore. */
export function natsToolSetStore(nc: NatsConnection, names: BusNames): ToolSetStore {
  const js = jetstream(nc);
  let jsm: Promise<JetStreamManager> | undefined;
  return {
    async put(digestHex, encoded) {
      await js.publish(names.toolSet(digestHex), encoded, { msgID: `tool-set:${digestHex}` });
    },
    async get(digestHex) {
      jsm ??= jetstreamManager(nc);
      // STREAM.MSG.GET is answered by the stream's leader: a set stored a moment ago is there.
      const stored = await (await jsm).streams.getMessage(names.toolSetsStream, { last_by_subj: names.toolSet(digestHex) });
      return stored === null ? undefined : stored.data;
    },
  };
}
