/** The fake Cursor client for end-to-end tests (see client.ts for usage). */
export { FakeCursorClient, FakeConversation, type FakeCursorOptions, type TurnOptions } from "./client.ts";
export { CursorRun, RUN_SSE_PATH, BIDI_APPEND_PATH, type RunOptions, type RunResult, type RunEnd, type KvBehaviour, type KvSet, type CheckpointRecord } from "./run.ts";
export { BlobStore, blobIdOf, blobKey } from "./blob-store.ts";
export { buildRunRequest, emptyConversationState, DEFAULT_ENV, type ConversationState, type ModelSelection, type RunRequestEnv } from "./run-request.ts";
export { EnvelopeReader, encodeEnvelope, parseEndStream, decodeBase64Lenient, FLAG_COMPRESSED, FLAG_END_STREAM, type Envelope, type EndStreamOutcome } from "./envelope.ts";
export { HttpTransport, ProxyConnectError, type TransportOptions, type ProxyOptions } from "./transport.ts";
export { frameLabel, describeTimeline, checkpointKind, isTextDelta, type TimelineEntry, type CheckpointKind } from "./timeline.ts";
export { checkpointBlobReferences } from "./checkpoint-refs.ts";
export type { ExecContext, ExecHandler, ExecHandlers, QueryContext, QueryHandler } from "./exec.ts";
export {
  SubagentRunner,
  PARENT_REQUEST_ID_HEADER,
  PARENT_TOOL_CALL_ID_HEADER,
  ROOT_PARENT_REQUEST_ID_HEADER,
  type ChildRecord,
  type CompletionRecord,
  type SubagentRunnerOptions,
} from "./subagents.ts";
export { approveAll, queryAnswers, type QueryAnswers } from "./query-answers.ts";
