/**
 * Fuzz targets of the adapter's client-input parsing (fuzz.test.ts runs them a
 * few hundred times each, bench/fuzz.ts a million):
 *
 * - hex appends: any BidiAppendRequest -> decodeBidiAppend answers ok or
 *   invalid, never throws, and what it decoded is what was sent;
 * - client messages: real client messages (a run_request with history, images
 *   and context; KV and exec answers; actions) with their bytes mutated, then
 *   decoded; what decodes goes through the code that reads it (the run_request
 *   check, run preparation, the exec wire), which may refuse it only with the
 *   errors the session maps to protocol or client failures;
 * - checkpoint blob graphs: a conversation state whose roots, todos and
 *   pending calls point at blobs that exist, are missing, or hold any JSON
 *   (or none) -> run preparation, with the same rule.
 */
import { createHash } from "node:crypto";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import fc from "fast-check";
import { parseMemberId, parseRunId } from "@byok/contracts";
import { agent, aiserver } from "@byok/cursor-protocol";
import { parseGatewayConfig, silentLogger } from "@byok/platform";
import { fuzzTarget, mutatedBytes, type Fuzzable } from "@byok/test-support/fuzz";
import { KvError, type KvChannel } from "../checkpoint/kv-channel.ts";
import { TodoBlobError } from "../checkpoint/todo-blobs.ts";
import { decodeBidiAppend } from "../connect/append-decoding.ts";
import { PromptAssets } from "../prompting/prompt-assets.ts";
import { checkRunRequest } from "../request/check-run-request.ts";
import { HistoryImportError } from "../request/client-history.ts";
import { prepareRun } from "../request/prepare-run.ts";
import { RootParseError } from "../root-codec/root-import.ts";
import { ExecWire } from "../session/exec-wire.ts";
import { SessionError } from "../session/failures.ts";
import { DEFAULT_PROMPT_DIR } from "../tools/catalog.ts";

const MODEL_ID = "fuzz-model";
const models = parseGatewayConfig(
  {
    providers: { p: { kind: "openai-chat", baseUrl: "http://127.0.0.1:9/v1", apiKeyEnv: "FUZZ_KEY" } },
    models: [{ id: MODEL_ID, displayName: "Fuzz", provider: "p", upstreamModel: "m", contextWindow: 1000, efforts: ["low", "high"] }],
  },
  "fuzz",
).models;
const prompts = new PromptAssets(DEFAULT_PROMPT_DIR);
const log = silentLogger();

const sha256 = (bytes: Uint8Array): Uint8Array => new Uint8Array(createHash("sha256").update(bytes).digest());
const utf8 = (text: string): Uint8Array => new Uint8Array(Buffer.from(text, "utf8"));

// ---- hex appends ----

const validMessageHex = fc.constantFrom(
  Buffer.from(toBinary(agent.AgentClientMessageSchema, create(agent.AgentClientMessageSchema, { message: { case: "clientHeartbeat", value: {} } }))).toString("hex"),
  Buffer.from(
    toBinary(agent.AgentClientMessageSchema, create(agent.AgentClientMessageSchema, { message: { case: "kvClientMessage", value: { id: 3, message: { case: "setBlobResult", value: {} } } } })),
  ).toString("hex"),
);

const hexAppends = fuzzTarget({
  name: "cursor adapter: hex appends (decodeBidiAppend)",
  arbitrary: fc.record({
    requestId: fc.oneof(fc.string({ maxLength: 40 }), fc.uuid()),
    seqno: fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }),
    data: fc.oneof(
      validMessageHex,
      validMessageHex.map((h) => h.toUpperCase()),
      fc.uint8Array({ maxLength: 64 }).map((b) => Buffer.from(b).toString("hex")),
      fc.string({ maxLength: 64 }),
      fc.stringMatching(/^[0-9a-f]{1,63}$/),
    ),
    dataBinary: fc.uint8Array({ maxLength: 8 }),
  }),
  check(input) {
    const request = create(aiserver.BidiAppendRequestSchema, { requestId: { requestId: input.requestId }, appendSeqno: input.seqno, data: input.data, dataBinary: input.dataBinary });
    const decoded = decodeBidiAppend(request);
    if (decoded.kind === "invalid") return;
    if (decoded.requestId !== input.requestId || decoded.requestId === "") throw new Error("request id changed");
    if (BigInt(decoded.seqno) !== input.seqno || decoded.seqno < 0) throw new Error("seqno changed or negative");
    if (!Buffer.from(decoded.bytes).equals(Buffer.from(input.data, "hex"))) throw new Error("bytes are not the hex data");
    if (decoded.message.message.case === undefined) throw new Error("a message without content was accepted");
  },
});

// ---- client messages ----

/** Blobs a realistic checkpoint refers to: a system root, a user root, an assistant root, a todo. */
const rootJsons = [
  { role: "system", content: "You are a coding agent." },
  { role: "user", content: [{ type: "text", text: "hello" }, { type: "image", image: "data:image/png;base64,iVBORw0KGgo=", mimeType: "image/png" }], id: "m1" },
  { role: "assistant", content: [{ type: "text", text: "hi" }, { type: "tool-call", toolCallId: "c1", toolName: "Read", args: { path: "/a" } }], id: "1" },
  { role: "tool", id: "c1", content: [{ type: "tool-result", toolCallId: "c1", toolName: "Read", output: { type: "text", value: "x" } }] },
];
const seedBlobs = rootJsons.map((json) => utf8(JSON.stringify(json)));
const seedIds = seedBlobs.map(sha256);

function seedRunRequest(action: "user" | "resume"): agent.AgentClientMessage {
  return create(agent.AgentClientMessageSchema, {
    message: {
      case: "runRequest",
      value: {
        conversationId: "conversation-1",
        requestedModel: { modelId: `${MODEL_ID}[effort=high]`, parameters: [{ id: "fast", value: "true" }] },
        conversationState: {
          rootPromptMessagesJson: seedIds,
          pendingToolCalls: [JSON.stringify({ role: "assistant", content: [{ type: "tool-call", toolCallId: "c2", toolName: "Read", args: { path: "/b" } }], providerOptions: { cursor: { pendingToolCallStartedAtMs: 5 } } })],
        },
        preFetchedBlobs: seedBlobs.map((value, i) => ({ id: seedIds[i]!, value })),
        action:
          action === "user"
            ? {
                action: {
                  case: "userMessageAction",
                  value: {
                    userMessage: { text: "what is in /a?", messageId: "m2", selectedContext: { selectedImages: [{ blobId: seedIds[1]!, mimeType: "image/png" }] } },
                    requestContext: { env: { osVersion: "linux", shell: "bash", workspacePaths: ["/w"], terminalsFolder: "/t" } },
                  },
                },
              }
            : { action: { case: "resumeAction", value: {} } },
      },
    },
  });
}

const seedMessages: agent.AgentClientMessage[] = [
  seedRunRequest("user"),
  seedRunRequest("resume"),
  create(agent.AgentClientMessageSchema, { message: { case: "kvClientMessage", value: { id: 1, message: { case: "getBlobResult", value: { blobData: seedBlobs[0]! } } } } }),
  create(agent.AgentClientMessageSchema, {
    message: { case: "execClientMessage", value: { id: 1, message: { case: "readResult", value: { result: { case: "success", value: { path: "/a", totalLines: 1, output: { case: "content", value: "x" } } } } } } },
  }),
  create(agent.AgentClientMessageSchema, { message: { case: "conversationAction", value: { action: { case: "cancelAction", value: { reason: "stop" } } } } }),
];

/** Errors the session turns into protocol / client failures: a refusal, not a crash. */
function isRefusal(err: unknown): boolean {
  return err instanceof SessionError || err instanceof HistoryImportError || err instanceof RootParseError || err instanceof TodoBlobError || err instanceof KvError;
}

/** A KV channel whose client knows `blobs` (by hex id) and nothing else. */
function clientKv(blobs: ReadonlyMap<string, Uint8Array>): KvChannel {
  return {
    get: async (id: Uint8Array) => {
      const bytes = blobs.get(Buffer.from(id).toString("hex"));
      if (bytes === undefined) throw new KvError("client_error", "blob not found");
      return bytes;
    },
  } as unknown as KvChannel;
}

async function prepare(runRequest: agent.AgentRunRequest, kvBlobs: ReadonlyMap<string, Uint8Array>): Promise<void> {
  if (checkRunRequest(runRequest).kind === "invalid") return;
  try {
    const plan = await prepareRun({
      runId: parseRunId("fuzz-run"),
      memberId: parseMemberId("local"),
      runRequest,
      headers: {},
      models,
      web: { fetchEnabled: true, searchEnabled: true },
      prompts,
      blobSources: {
        conversationId: runRequest.conversationId ?? "",
        prefetched: new Map(runRequest.preFetchedBlobs.map((b) => [Buffer.from(b.id).toString("hex"), b.value])),
        store: { getBlobs: async () => new Map(), putBlobs: async () => undefined } as never,
        kv: clientKv(kvBlobs),
        log,
      },
      store: { importHistory: async () => "00000000-0000-4000-8000-000000000000" } as never,
      log,
    });
    toBinary(agent.ConversationStateStructureSchema, plan.baseState);
  } catch (err) {
    if (!isRefusal(err)) throw err;
  }
}

function feedExecWire(message: agent.AgentClientMessage): void {
  const failures: unknown[] = [];
  const wire = new ExecWire({ send: () => {}, protocolError: () => {}, workFailed: (error) => void failures.push(error), log });
  const m = message.message;
  if (m.case === "execClientMessage") wire.onExecMessage(m.value);
  else if (m.case === "execClientControlMessage") wire.onExecControl(m.value);
  else if (m.case === "interactionResponse") wire.onInteractionResponse(m.value);
  if (failures.length > 0) throw failures[0];
}

const clientMessages = fuzzTarget({
  name: "cursor adapter: client messages (mutated protobuf)",
  arbitrary: mutatedBytes(seedMessages.map((m) => toBinary(agent.AgentClientMessageSchema, m))),
  async check(bytes) {
    let message: agent.AgentClientMessage;
    try {
      message = fromBinary(agent.AgentClientMessageSchema, bytes);
    } catch {
      return; // refused at decoding: decodeBidiAppend answers invalid_argument
    }
    if (message.message.case === "runRequest") await prepare(message.message.value, new Map());
    else feedExecWire(message);
  },
});

// ---- checkpoint blob graphs ----

const jsonRoot = fc.oneof(
  fc.record(
    {
      role: fc.constantFrom("system", "user", "assistant", "tool", "developer", 7),
      id: fc.oneof(fc.string({ maxLength: 10 }), fc.constantFrom("request-context:x", "runtime:y")),
      content: fc.oneof(
        fc.string({ maxLength: 20 }),
        fc.array(
          fc.record(
            {
              type: fc.constantFrom("text", "reasoning", "image", "file", "tool-call", "tool-result", "redacted"),
              text: fc.oneof(fc.string({ maxLength: 10 }), fc.integer()),
              image: fc.oneof(fc.string({ maxLength: 24 }), fc.constantFrom("data:image/png,%E0%A4%A", "data:;base64,@@@", "https://x/y.png", "data:text/plain,%41")),
              data: fc.string({ maxLength: 12 }),
              mediaType: fc.constantFrom("image/png", "text/plain", 3),
              toolCallId: fc.string({ maxLength: 6 }),
              toolName: fc.string({ maxLength: 6 }),
              args: fc.jsonValue({ maxDepth: 2 }),
              input: fc.string({ maxLength: 12 }),
              output: fc.record({ type: fc.constantFrom("text", "error-text", "json", "content", "error-json"), value: fc.jsonValue({ maxDepth: 2 }) }, { requiredKeys: [] }),
              result: fc.jsonValue({ maxDepth: 2 }),
              isError: fc.boolean(),
              providerOptions: fc.record({ byok: fc.record({ argumentsJson: fc.string({ maxLength: 8 }), origin: fc.string({ maxLength: 8 }) }, { requiredKeys: [] }) }),
            },
            { requiredKeys: ["type"] },
          ),
          { maxLength: 4 },
        ),
        fc.jsonValue({ maxDepth: 2 }),
      ),
      providerOptions: fc.record({
        byok: fc.record({ origin: fc.constantFrom("user", "context", "runtime", "nope"), replay: fc.record({ kind: fc.string(), route: fc.string(), data: fc.string() }, { requiredKeys: [] }) }, { requiredKeys: [] }),
      }),
    },
    { requiredKeys: [] },
  ).map((root) => utf8(JSON.stringify(root))),
  fc.jsonValue({ maxDepth: 3 }).map((value) => utf8(JSON.stringify(value) ?? "null")),
  fc.uint8Array({ maxLength: 40 }),
);

/** A root entry: a blob the client has, one it lacks, or inline bytes. */
const rootEntry = fc.oneof(
  fc.record({ kind: fc.constant("blob" as const), bytes: jsonRoot, prefetched: fc.boolean() }),
  fc.record({ kind: fc.constant("missing" as const), id: fc.uint8Array({ minLength: 32, maxLength: 32 }) }),
  fc.record({ kind: fc.constant("inline" as const), bytes: jsonRoot }),
);

const blobGraphs = fuzzTarget({
  name: "cursor adapter: checkpoint blob graphs",
  arbitrary: fc.record({
    roots: fc.array(rootEntry, { maxLength: 6 }),
    todos: fc.array(fc.oneof(jsonRoot.map((bytes) => ({ bytes })), fc.uint8Array({ minLength: 32, maxLength: 32 }).map((id) => ({ id }))), { maxLength: 2 }),
    pending: fc.array(fc.oneof(fc.string({ maxLength: 30 }), jsonRoot.map((b) => Buffer.from(b).toString("utf8"))), { maxLength: 2 }),
    resume: fc.boolean(),
  }),
  async check(graph) {
    const prefetched: Array<{ id: Uint8Array; value: Uint8Array }> = [];
    const clientOnly = new Map<string, Uint8Array>();
    const roots = graph.roots.map((entry) => {
      if (entry.kind === "missing") return entry.id;
      if (entry.kind === "inline") return entry.bytes;
      const id = sha256(entry.bytes);
      if (entry.prefetched) prefetched.push({ id, value: entry.bytes });
      else clientOnly.set(Buffer.from(id).toString("hex"), entry.bytes);
      return id;
    });
    const todos = graph.todos.map((todo) => {
      if ("id" in todo) return todo.id;
      const id = sha256(todo.bytes);
      clientOnly.set(Buffer.from(id).toString("hex"), todo.bytes);
      return id;
    });
    const runRequest = create(agent.AgentRunRequestSchema, {
      conversationId: "c",
      requestedModel: { modelId: MODEL_ID },
      conversationState: { rootPromptMessagesJson: roots, todos, pendingToolCalls: graph.pending },
      preFetchedBlobs: prefetched,
      action: graph.resume ? { action: { case: "resumeAction", value: {} } } : { action: { case: "userMessageAction", value: { userMessage: { text: "go", messageId: "u" } } } },
    });
    await prepare(runRequest, clientOnly);
  },
});

export const cursorAdapterFuzzTargets: readonly Fuzzable[] = [hexAppends, clientMessages, blobGraphs];
