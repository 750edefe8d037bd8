/**
 * For tests: a real store (own Postgres database, own bus prefix) and a typed
 * client that calls it over NATS exactly as the other services do.
 */
import type { MessageInitShape, MessageShape } from "@bufbuild/protobuf";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import pg from "pg";
import { busNames, STORE_OPERATIONS, UserOrigin, type Message, type MessageSchema, type StoreOperation, type StoreOperations } from "@byok/contracts";
import { busRequest, silentLogger } from "@byok/platform";
import { createTestBus, createTestDatabase } from "@byok/test-support/infra";
import { loadConfig } from "./config.ts";
import { startStore, type RunningStore } from "./service.ts";

export interface TestStore {
  readonly databaseUrl: string;
  readonly busPrefix: string;
  readonly nc: NatsConnection;
  call<K extends keyof StoreOperations>(
    operation: K,
    request: MessageInitShape<StoreOperations[K]["request"]>,
  ): Promise<MessageShape<StoreOperations[K]["response"]>>;
  /** Runs SQL directly against the store's database (for checks the API cannot make). */
  sql(text: string, values?: unknown[]): Promise<pg.QueryResult>;
  /** Stops the store and starts it again on the same database and bus. */
  restart(): Promise<void>;
  close(): Promise<void>;
}

/** `now`: the store's clock (default: the real one). */
export async function startTestStore(options: { now?: () => Date } = {}): Promise<TestStore> {
  const database = await createTestDatabase();
  const bus = createTestBus();
  const config = loadConfig({ DATABASE_URL: database.url, NATS_URL: bus.natsUrl, BUS_PREFIX: bus.prefix, DATABASE_POOL_SIZE: "4", RETENTION_INTERVAL_MS: "0" });
  const names = busNames(bus.prefix);
  const overrides = { log: silentLogger(), ...(options.now === undefined ? {} : { now: options.now }) };
  let store: RunningStore = await startStore(config, overrides);
  const nc = await connect({ servers: bus.natsUrl });
  const admin = new pg.Client({ connectionString: database.url });
  await admin.connect();
  function call<K extends keyof StoreOperations>(
    operation: K,
    request: MessageInitShape<StoreOperations[K]["request"]>,
  ): Promise<MessageShape<StoreOperations[K]["response"]>> {
    const op = STORE_OPERATIONS[operation] as StoreOperation<StoreOperations[K]["request"], StoreOperations[K]["response"]>;
    return busRequest(nc, names.store(op.name), op.request, request, op.response, { timeoutMs: 10_000 });
  }
  return {
    databaseUrl: database.url,
    busPrefix: bus.prefix,
    nc,
    call,
    sql: (text, values) => admin.query(text, values),
    async restart() {
      await store.stop();
      store = await startStore(config, overrides);
    },
    async close() {
      await store.stop();
      await admin.end();
      await nc.close();
      await bus.cleanup();
      await database.drop();
    },
  };
}

export type MessageInit = MessageInitShape<typeof MessageSchema>;

export function userText(text: string, clientId = ""): MessageInit {
  return { body: { case: "user", value: { clientId, origin: UserOrigin.USER, content: [{ part: { case: "text", value: { text } } }] } } };
}

export function assistantText(text: string): MessageInit {
  return { body: { case: "assistant", value: { content: [{ part: { case: "text", value: { text } } }] } } };
}

/** Text of every text/reasoning part, and each message's kind, for compact assertions. */
export function describeMessages(messages: readonly Message[]): string[] {
  return messages.map((m) => {
    switch (m.body.case) {
      case "user":
        return `user:${m.body.value.content.map((p) => (p.part.case === "text" ? p.part.value.text : `[${p.part.case}]`)).join("")}`;
      case "assistant":
        return `assistant:${m.body.value.content
          .map((p) => {
            switch (p.part.case) {
              case "text":
                return p.part.value.text;
              case "reasoning":
                return `(thinking ${p.part.value.text})`;
              case "toolCall":
                return `[call ${p.part.value.callId}]`;
              default:
                return `[${p.part.case}]`;
            }
          })
          .join("")}${m.body.value.replay ? " +replay" : ""}`;
      case "toolResult":
        return `result:${m.body.value.callId}=${m.body.value.content}${m.body.value.isError ? " (error)" : ""}`;
      case undefined:
        return "empty";
    }
  });
}
