/**
 * The store operations a session uses (history.import, revision.messages,
 * blob.get, blob.put, run.get), typed, with bus errors and StoreError responses mapped
 * once into StoreCallError.
 */
import type { MessageInitShape, MessageShape } from "@bufbuild/protobuf";
import { STORE_OPERATIONS, StoreErrorKind, type BusNames, type Message, type RunRecord, type StoreOperation } from "@byok/contracts";
import { BusError, busRequest, type NatsConnection } from "@byok/platform";
import type { DescMessage } from "@bufbuild/protobuf";

export class StoreCallError extends Error {
  override readonly name = "StoreCallError";
  /** StoreErrorKind name, or the bus failure kind. */
  readonly kind: string;
  constructor(kind: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.kind = kind;
  }
}

export interface StoreClient {
  importHistory(conversationId: string, memberId: string, messages: Message[]): Promise<string>;
  /** The full history of a revision, oldest first. */
  revisionMessages(revisionId: string): Promise<Message[]>;
  /** The blobs the store has, by hex id; missing ids are simply absent. */
  getBlobs(ids: Uint8Array[]): Promise<Map<string, Uint8Array>>;
  putBlob(data: Uint8Array): Promise<void>;
  /** The run's record; undefined while no worker has begun it. */
  getRun(runId: string): Promise<RunRecord | undefined>;
}

type WithError = { error?: { kind: StoreErrorKind; message: string } | undefined };

export function createStoreClient(nc: NatsConnection, names: BusNames, timeoutMs: number): StoreClient {
  async function call<I extends DescMessage, O extends DescMessage>(
    op: StoreOperation<I, O>,
    request: MessageInitShape<I>,
  ): Promise<MessageShape<O>> {
    let response: MessageShape<O>;
    try {
      response = await busRequest(nc, names.store(op.name), op.request, request, op.response, { timeoutMs });
    } catch (cause) {
      if (cause instanceof BusError) throw new StoreCallError(cause.kind, `store ${op.name}: ${cause.message}`, { cause });
      throw cause;
    }
    const error = (response as WithError).error;
    if (error !== undefined && error.kind !== StoreErrorKind.UNSPECIFIED) {
      throw new StoreCallError(StoreErrorKind[error.kind] ?? String(error.kind), `store ${op.name}: ${error.message}`);
    }
    return response;
  }

  return {
    async importHistory(conversationId, memberId, messages) {
      const response = await call(STORE_OPERATIONS.importHistory, { conversationId, memberId, messages });
      return response.revisionId;
    },
    async revisionMessages(revisionId) {
      const response = await call(STORE_OPERATIONS.getRevisionMessages, { revisionId });
      return response.messages;
    },
    async getBlobs(ids) {
      const found = new Map<string, Uint8Array>();
      if (ids.length === 0) return found;
      const response = await call(STORE_OPERATIONS.getBlobs, { ids });
      for (const blob of response.blobs) found.set(Buffer.from(blob.id).toString("hex"), blob.data);
      return found;
    },
    async putBlob(data) {
      await call(STORE_OPERATIONS.putBlob, { data });
    },
    async getRun(runId) {
      try {
        return (await call(STORE_OPERATIONS.getRun, { runId })).run;
      } catch (error) {
        if (error instanceof StoreCallError && error.kind === StoreErrorKind[StoreErrorKind.NOT_FOUND]) return undefined;
        throw error;
      }
    },
  };
}
