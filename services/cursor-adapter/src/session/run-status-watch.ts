/**
 * The status watch of a published run (a lost terminal is found in the
 * store) lives in @byok/run-client with the rest of the run lifecycle; this
 * module names the record -> terminal mapping the session tests check.
 */
export { terminalOfRecord } from "@byok/run-client";
export type { RunTerminalInit } from "@byok/run-client";
