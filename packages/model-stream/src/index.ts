/**
 * @byok/model-stream: the rules of a model call's ModelEvent stream (one
 * table and its checker) and the assembly of an accepted stream into the
 * assistant message the contract defines. Shared by the provider gateway
 * (which writes streams) and the run worker (which reads them); pure, no I/O.
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
