/**
 * The seam between the run router (which instance handles an append or a
 * RunSSE) and the bus that connects the adapter instances. The owner of a
 * request id is the instance holding its RunSSE: it serves the request id, and
 * every other instance forwards the request's appends to it.
 *
 * `nats-peer-link.ts` implements it on core NATS; the router's unit tests use
 * an in-memory network of instances.
 */
import type { RunId } from "@byok/contracts";
import type { AppendInput, AppendOutcome, Rejection } from "./run-registry.ts";

/** An append as the router routes it: the decoded message and its bytes (what travels to the owner). */
export interface RoutedAppend extends AppendInput {
  readonly requestId: RunId;
  /** The serialized AgentClientMessage (the append's hex, decoded). */
  readonly bytes: Uint8Array;
}

/** What the owner does with what other instances send it. */
export interface OwnerHandlers {
  append(input: AppendInput): Promise<AppendOutcome>;
  /** The answer for a RunSSE of `memberId` that another instance received for this request id. */
  probe(memberId: string): Rejection;
}

export type ForwardResult =
  | { kind: "answered"; outcome: AppendOutcome }
  /** No instance serves the request id (yet). */
  | { kind: "no_owner" }
  /** The owner did not answer in time, or the bus failed. */
  | { kind: "failed"; message: string };

export type ProbeResult = { kind: "no_owner" } | { kind: "owned"; rejection: Rejection } | { kind: "failed"; message: string };

export interface ServedRun {
  /** Stop serving (the request id was forgotten). */
  stop(): void;
}

export interface PeerLink {
  /** Asks whether another instance owns `requestId` (before becoming its owner). */
  probe(requestId: RunId, memberId: string): Promise<ProbeResult>;
  /** Serve `requestId` as its owner; once reachable, tell the instances that hold early appends. */
  serve(requestId: RunId, handlers: OwnerHandlers): ServedRun;
  /** Send one append to the owner and wait (at most `timeoutMs`) for its answer. */
  forward(append: RoutedAppend, timeoutMs: number): Promise<ForwardResult>;
  /** Calls `onOwner` whenever an instance starts serving `requestId`; returns the unsubscribe. */
  watchOwner(requestId: RunId, onOwner: () => void): () => void;
}
