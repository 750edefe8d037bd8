/** Options and results of one fake Cursor run (see run.ts). */
import type { agent } from "@byok/cursor-protocol";
import type { BlobStore } from "./blob-store.ts";
import type { EndStreamOutcome } from "./envelope.ts";
import type { ExecHandlers, QueryHandler } from "./exec.ts";
import type { CheckpointKind, TimelineEntry } from "./timeline.ts";
import type { HttpTransport } from "./transport.ts";

export const RUN_SSE_PATH = "/agent.v1.AgentService/RunSSE";
export const BIDI_APPEND_PATH = "/aiserver.v1.BidiService/BidiAppend";

/** A KV SET as the ACK hooks see it. */
export interface KvSet {
  readonly kvId: number;
  readonly blobId: Uint8Array;
  readonly data: Uint8Array;
}

export interface KvBehaviour {
  /** Milliseconds to wait before ACKing a SET (default 0). */
  ackDelayMs?: (set: KvSet) => number;
  /** True = never ACK this SET (tests of the server's ACK timeout). */
  dropAck?: (set: KvSet) => boolean;
  /** A promise = ACK this SET only once it resolves (a test acts while the server waits). */
  ackAfter?: (set: KvSet) => Promise<void> | undefined;
}

export interface RunOptions {
  requestId?: string;
  /** The seqno-0 append (see buildRunRequest). */
  runRequest: agent.AgentClientMessage;
  /** Extra request headers on RunSSE and every BidiAppend (e.g. x-parent-request-id). */
  headers?: Readonly<Record<string, string>>;
  /** client_heartbeat period; 0 = none. Default 5000. */
  heartbeatMs?: number;
  kv?: KvBehaviour;
  onExec?: ExecHandlers;
  onQuery?: QueryHandler;
  /** Which half goes first (default "concurrent"). "append-first" waits for the seqno-0 answer before RunSSE. */
  start?: "concurrent" | "stream-first" | "append-first";
  /** gzip the seqno-0 BidiAppend body (Content-Encoding: gzip), as the IDE often does for large first appends. */
  gzipFirstAppend?: boolean;
}

/** How the RunSSE body ended: an EndStream envelope, or something a real client would call broken. */
export type RunEnd = EndStreamOutcome | { kind: "broken"; reason: string };

export interface CheckpointRecord {
  readonly order: number;
  readonly kind: CheckpointKind;
  readonly state: agent.ConversationStateStructure;
  readonly beforeTurnEnded: boolean;
}

export interface RunResult {
  readonly requestId: string;
  readonly end: RunEnd;
  /** Concatenated text_delta texts. */
  readonly text: string;
  readonly thinking: string;
  readonly turnEnded: agent.TurnEndedUpdate | undefined;
  readonly checkpoints: readonly CheckpointRecord[];
  /** Last settled checkpoint received (the next turn's conversation_state). */
  readonly lastSettled: agent.ConversationStateStructure | undefined;
  /** Last checkpoint received before turn_ended (the resume point after a drop). */
  readonly resumePoint: agent.ConversationStateStructure | undefined;
  readonly timeline: readonly TimelineEntry[];
  readonly violations: readonly string[];
  /** Readable frame sequence for assertion messages. */
  describe(): string;
}

export interface RunHost {
  readonly transport: HttpTransport;
  readonly blobs: BlobStore;
  readonly baseHeaders: Readonly<Record<string, string>>;
}
