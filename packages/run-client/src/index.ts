/**
 * @byok/run-client: the client side of the run boundary (ARCHITECTURE §3),
 * shared by every client adapter (Cursor, ACP). It knows the bus contract and
 * nothing of any client protocol: what a commit, a tool call or a terminal
 * looks like to a client stays in that client's adapter.
 */
export { ClientEventOrder } from "./client-event-order.ts";
export type { ClientEventPlace } from "./client-event-order.ts";
export { BusPublishError, openRunBus, publishCancel, publishClientClosed, publishPreparedRun, publishToolResult } from "./run-bus.ts";
export type { RunBus, RunBusHandlers, StateAckInit, ToolResultInit } from "./run-bus.ts";
export { RunLifecycle } from "./run-lifecycle.ts";
export type { CancelEffect, RunHandlers, RunLifecyclePorts, RunLifecycleTimeouts, StopCommand } from "./run-lifecycle.ts";
export { RunStatusWatch, terminalOfRecord } from "./run-status-watch.ts";
export type { RunStatusWatchPorts, RunTerminalInit } from "./run-status-watch.ts";
export { runStreamsOnce } from "./run-streams-once.ts";
export type { EnsureRunStreams } from "./run-streams-once.ts";
export { STREAM_CLOSED, StateEventRouter } from "./state-events.ts";
export type { StateEventPorts } from "./state-events.ts";
export { ToolRoundLedger } from "./tool-round-ledger.ts";
export type { ToolRound, ToolRoundLedgerPorts } from "./tool-round-ledger.ts";
