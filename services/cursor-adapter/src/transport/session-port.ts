/**
 * The seam between the Cursor transport (RunSSE/BidiAppend rendezvous, Connect
 * framing, append ordering, heartbeats) and a run session (run_request ->
 * PreparedRun, ClientEvents -> frames, KV blobs, checkpoints, exec mapping).
 *
 * The transport owns one `ServerStream` per request id and hands the session
 * every AgentClientMessage strictly in append_seqno order, duplicates removed.
 */
import type { agent, aiserver } from "@byok/cursor-protocol";

/** Lowercase Connect error codes used on the wire. */
export const CONNECT_CODES = [
  "canceled",
  "unknown",
  "invalid_argument",
  "deadline_exceeded",
  "not_found",
  "permission_denied",
  "resource_exhausted",
  "failed_precondition",
  "aborted",
  "unavailable",
  "internal",
  "unauthenticated",
] as const;

export type ConnectCode = (typeof CONNECT_CODES)[number];

/** A code received from elsewhere (another adapter instance), if it is one of ours. */
export function parseConnectCode(value: string): ConnectCode | undefined {
  return (CONNECT_CODES as readonly string[]).includes(value) ? (value as ConnectCode) : undefined;
}

export type EndOutcome =
  | { kind: "ok" }
  | { kind: "error"; code: ConnectCode; message: string; details?: aiserver.ErrorDetails };

/** The RunSSE side of one request id, as the session sees it. */
export interface ServerStream {
  /** Queue one AgentServerMessage envelope (buffered until RunSSE is attached). Ignored after end(). */
  send(message: agent.AgentServerMessage): void;
  /** Write exactly one EndStream envelope and close the body. Later calls are ignored. */
  end(outcome: EndOutcome): void;
  /** True once end() was called. */
  readonly ended: boolean;
}

export interface RunOpenContext {
  requestId: string;
  /** Member the edge proxy authenticated (header x-byok-member-id); "local" when run without the proxy. */
  memberId: string;
  /** Request headers of the first BidiAppend (lower-case names), e.g. x-parent-request-id. */
  headers: Readonly<Record<string, string>>;
  /** The decoded run_request (append_seqno 0). */
  runRequest: agent.AgentRunRequest;
  stream: ServerStream;
}

export interface RunSession {
  /** Every later AgentClientMessage of this request id, in append_seqno order. */
  deliver(message: agent.AgentClientMessage): void;
  /** The RunSSE connection closed before EndStream (client disconnect): cancel the run. */
  clientDisconnected(): void;
}

/** Outcome of validating a run_request before a session is opened. */
export type RunRequestCheck = { kind: "ok" } | { kind: "invalid"; message: string };

export interface RunSessionFactory {
  /** Synchronous checks that decide the BidiAppend answer for seqno 0 (e.g. "no model"). */
  check(runRequest: agent.AgentRunRequest): RunRequestCheck;
  open(context: RunOpenContext): RunSession;
}
