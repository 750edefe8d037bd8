/**
 * @byok/model-stream: the rules of a model call's ModelEvent stream (one
 * table and its checker) and the assembly of an accepted stream into the
 * assistant message the contract defines, and the coalescing of deltas that
 * arrive together (its timer comes from the caller). Shared by the provider
 * gateway (which writes streams) and the run worker (which reads them and
 * forwards them to the client); no I/O.
 */
export {
  BLOCK_RULES,
  eventName,
  isJsonObjectText,
  MODEL_STREAM_RULES,
  ModelStreamChecker,
  STOP_RULES,
  type BlockKind,
  type BlockRule,
  type Effect,
  type EventRule,
  type ModelEventCase,
  type Place,
  type StreamEvent,
  type StreamVerdict,
} from "./stream-rules.ts";
export { ModelStreamAssembly, type AssembledAssistant, type AssembledBlock, type ReplayInit } from "./stream-assembly.ts";
export { blockDeltaRule, DeltaCoalescer, type BlockDeltaLike, type CoalescerTimers, type CoalescingRule } from "./delta-coalescer.ts";
export { DeltaWindow } from "./delta-window.ts";
