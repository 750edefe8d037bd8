/**
 * For the session tests: a real store (own database, own bus prefix), a fake
 * Cursor client behind a recording ServerStream (answers KV like the IDE), and a
 * driver that plays the run owner's side of the bus contract.
 */
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { create, fromBinary, type MessageInitShape, type MessageShape } from "@bufbuild/protobuf";
import { AckPolicy, jetstream, jetstreamManager, type Consumer } from "@nats-io/jetstream";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import {
  busNames,
  ClientCommandSchema,
  ClientEventSchema,
  encodeClientEventFrame,
  parseRunId,
  StateAckSchema,
  StateEventSchema,
  STORE_OPERATIONS,
  type BusNames,
  type ClientCommand,
  type PreparedRun,
  type StateAck,
  type StoreOperation,
  type StoreOperations,
  PreparedRunSchema,
} from "@byok/contracts";
import { agent } from "@byok/cursor-protocol";
import { busRequest, ensureRunStreams, parseGatewayConfig, Registry, silentLogger, webConfigSchema, type ModelConfig } from "@byok/platform";
import { loadConfig as loadStoreConfig, startStore, type RunningStore } from "@byok/store";
import { createTestBus, createTestDatabase, waitFor } from "@byok/test-support/infra";
import { blobIdOf, blobKey } from "../checkpoint/blob-id.ts";
import { createCursorAdapterMetrics } from "../metrics.ts";
import type { EndOutcome, RunSession, RunSessionFactory, ServerStream } from "../transport/session-port.ts";
import type { SessionTimeouts } from "./deps.ts";
import { createRunSessionFactory } from "./factory.ts";

export const PROMPT_DIR = join(fileURLToPath(new URL(".", import.meta.url)), "../../../../prompt/cursor");

export const TEST_MODELS: ModelConfig[] = parseGatewayConfig(
  {
    providers: { main: { kind: "anthropic", baseUrl: "https://llm.invalid", apiKeyEnv: "TEST_KEY" } },
    models: [{ id: "sonnet-test", displayName: "Sonnet Test", provider: "main", upstreamModel: "claude-x", contextWindow: 200000, efforts: ["low", "high"] }],
  },
  "session test",
).models;

export class FakeCursorClient {
  /** The client's blob store, kept across turns. */
  readonly blobs = new Map<string, Uint8Array>();
  frames: agent.AgentServerMessage[] = [];
  outcome: EndOutcome | undefined;
  session: RunSession | undefined;
  /** "ack" answers SETs, "hold" leaves them unanswered, "refuse" answers with an error. */
  setMode: "ack" | "hold" | "refuse" = "ack";
  readonly #heldSets: number[] = [];

  store(bytes: Uint8Array): Uint8Array {
    const id = blobIdOf(bytes);
    this.blobs.set(blobKey(id), bytes);
    return id;
  }

  stream(): ServerStream {
    this.frames = [];
    this.outcome = undefined;
    const isEnded = () => this.outcome !== undefined;
    return {
      get ended() {
        return isEnded();
      },
      send: (message) => {
        if (isEnded()) return;
        this.frames.push(message);
        if (message.message.case === "kvServerMessage") this.#answerKv(message.message.value);
      },
      end: (outcome) => {
        if (!isEnded()) this.outcome = outcome;
      },
    };
  }

  releaseHeldSets(): void {
    for (const id of this.#heldSets.splice(0)) this.#deliverKv(id, { case: "setBlobResult", value: {} });
  }

  /** Non-KV frames, as interaction update / checkpoint case names. */
  uiFrames(): string[] {
    return this.frames.flatMap((f) => {
      switch (f.message.case) {
        case "kvServerMessage":
          return [];
        case "interactionUpdate":
          return [f.message.value.message.case ?? "?"];
        case "conversationCheckpointUpdate":
          return [f.message.value.pendingToolCalls.length > 0 ? "staged" : "settled"];
        default:
          return [f.message.case ?? "?"];
      }
    });
  }

  checkpoints(): agent.ConversationStateStructure[] {
    return this.frames.flatMap((f) => (f.message.case === "conversationCheckpointUpdate" ? [f.message.value] : []));
  }

  text(): string {
    return this.frames
      .map((f) => (f.message.case === "interactionUpdate" && f.message.value.message.case === "textDelta" ? f.message.value.message.value.text : ""))
      .join("");
  }

  #answerKv(request: agent.KvServerMessage): void {
    const m = request.message;
    if (m.case === "setBlobArgs") {
      this.blobs.set(blobKey(m.value.blobId), m.value.blobData);
      if (this.setMode === "hold") return void this.#heldSets.push(request.id);
      const value = this.setMode === "refuse" ? { error: { message: "no space left" } } : {};
      this.#deliverKv(request.id, { case: "setBlobResult", value });
    } else if (m.case === "getBlobArgs") {
      const data = this.blobs.get(blobKey(m.value.blobId));
      this.#deliverKv(request.id, { case: "getBlobResult", value: data ? { blobData: data } : { error: { message: "blob not found" } } });
    }
  }

  #deliverKv(id: number, message: MessageInitShape<typeof agent.KvClientMessageSchema>["message"]): void {
    // Like the IDE: answers arrive later, on another append.
    setImmediate(() =>
      this.session?.deliver(
        create(agent.AgentClientMessageSchema, { message: { case: "kvClientMessage", value: create(agent.KvClientMessageSchema, { id, message }) } }),
      ),
    );
  }
}

export interface SessionWorld {
  names: BusNames;
  nc: NatsConnection;
  factory: RunSessionFactory;
  storeCall<K extends keyof StoreOperations>(
    operation: K,
    request: MessageInitShape<StoreOperations[K]["request"]>,
  ): Promise<MessageShape<StoreOperations[K]["response"]>>;
  open(client: FakeCursorClient, runRequest: MessageInitShape<typeof agent.AgentRunRequestSchema>, options?: { requestId?: string }): string;
  /** Takes the PreparedRun of `runId` off the work queue (acknowledged, like a worker would). */
  takeRun(runId: string): Promise<PreparedRun>;
  event(runId: string, seq: number, event: MessageInitShape<typeof ClientEventSchema>["event"], modelCallIndex?: number): void;
  state(runId: string, event: MessageInitShape<typeof StateEventSchema>["event"]): Promise<StateAck>;
  /** The latest command published for the run, if any. */
  lastCommand(runId: string): Promise<ClientCommand | undefined>;
  close(): Promise<void>;
}

export async function startSessionWorld(timeouts: Partial<SessionTimeouts> = {}): Promise<SessionWorld> {
  const database = await createTestDatabase();
  const bus = createTestBus();
  const names = busNames(bus.prefix);
  let store: RunningStore | undefined;
  let nc: NatsConnection | undefined;
  try {
    store = await startStore(loadStoreConfig({ DATABASE_URL: database.url, NATS_URL: bus.natsUrl, BUS_PREFIX: bus.prefix, DATABASE_POOL_SIZE: "2" }), {
      log: silentLogger(),
    });
    nc = await connect({ servers: bus.natsUrl });
  } catch (error) {
    await store?.stop();
    await database.drop();
    throw error;
  }
  const conn = nc;
  await ensureRunStreams(conn, names);
  const jsm = await jetstreamManager(conn);
  await jsm.consumers.add(names.runsStream, { durable_name: "session-test-worker", ack_policy: AckPolicy.Explicit });
  const consumer: Consumer = await jetstream(conn).consumers.get(names.runsStream, "session-test-worker");
  const factory = createRunSessionFactory({
    nc: conn,
    names,
    log: silentLogger(),
    models: TEST_MODELS,
    // No web tools in these tests (tests/agent-web.test.ts covers them end to end).
    web: webConfigSchema.parse({ fetch: { enabled: false } }),
    converter: { convert: () => Promise.reject(new Error("no page conversion in session tests")), close: () => Promise.resolve() },
    promptDir: PROMPT_DIR,
    timeouts: { storeMs: 5_000, publishDeadlineMs: 5_000, blobAckMs: 2_000, kvGetMs: 2_000, runStatusCheckMs: 30_000, ...timeouts },
    metrics: createCursorAdapterMetrics(new Registry(), { activeRuns: () => 0, openRunSseStreams: () => 0 }),
  });
  const taken = new Map<string, PreparedRun>();

  return {
    names,
    nc: conn,
    factory,
    storeCall(operation, request) {
      const op = STORE_OPERATIONS[operation] as StoreOperation<StoreOperations[typeof operation]["request"], StoreOperations[typeof operation]["response"]>;
      return busRequest(conn, names.store(op.name), op.request, request, op.response, { timeoutMs: 5_000 });
    },
    open(client, runRequest, options = {}) {
      const requestId = options.requestId ?? randomUUID();
      const request = create(agent.AgentRunRequestSchema, runRequest);
      const check = factory.check(request);
      if (check.kind !== "ok") throw new Error(`run request rejected: ${check.message}`);
      client.session = factory.open({ requestId, memberId: "member-a", headers: {}, runRequest: request, stream: client.stream() });
      return requestId;
    },
    async takeRun(runId) {
      return waitFor(
        async () => {
          const known = taken.get(runId);
          if (known) return known;
          const msg = await consumer.next({ expires: 1_000 });
          if (msg) {
            const run = fromBinary(PreparedRunSchema, msg.data);
            expect_(msg.headers?.get("Nats-Msg-Id") === run.runId, "PreparedRun published with Nats-Msg-Id = run_id");
            msg.ack();
            taken.set(run.runId, run);
          }
          return taken.get(runId);
        },
        `PreparedRun ${runId}`,
        10_000,
      );
    },
    event(runId, seq, event, modelCallIndex = 0) {
      conn.publish(names.runEvents(parseRunId(runId)), encodeClientEventFrame([{ seq: BigInt(seq), modelCallIndex, event }]));
    },
    state(runId, event) {
      return busRequest(conn, names.runState(parseRunId(runId)), StateEventSchema, { event }, StateAckSchema, { timeoutMs: 10_000 });
    },
    async lastCommand(runId) {
      try {
        const stored = await jsm.streams.getMessage(names.commandsStream, { last_by_subj: names.runCommands(parseRunId(runId)) });
        if (!stored) return undefined;
        return fromBinary(ClientCommandSchema, stored.data);
      } catch {
        return undefined;
      }
    },
    async close() {
      await conn.drain();
      await store?.stop();
      await bus.cleanup();
      await database.drop();
    },
  };
}

function expect_(condition: boolean, what: string): void {
  if (!condition) throw new Error(`expected: ${what}`);
}
