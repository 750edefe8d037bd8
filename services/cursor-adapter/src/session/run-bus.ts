/**
 * The Cursor session's run bus is the shared client side of the run boundary
 * (@byok/run-client: subscriptions, durable publishes, BusPublishError). This
 * module only names what the session's failure boundary (failures.ts) maps
 * from it, so the session code and its tests keep one local import for it.
 */
export { BusPublishError } from "@byok/run-client";
export type { StateAckInit, ToolResultInit } from "@byok/run-client";
