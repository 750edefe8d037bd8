/**
 * StoreClient: the store's request/reply API (STORE_OPERATIONS, on
 * `names.store(operation.name)`) as typed calls. Every service talks to the
 * store through it: `call(operation, request)` for any operation, and one
 * method per operation the services use, which returns the result itself
 * rather than the response message.
 *
 * A call resolves with the store's answer or throws StoreFailure: a StoreError
 * in the response and a bus failure (no store listening, no reply in time,
 * undecodable reply) are mapped here, once, into its `kind`. A response that
 * lacks what the store always sends (run.begin without its run, ...) is
 * StoreFailure `internal`. Any other error (a bug) is thrown as it is.
 */
import {
  parseMemberId,
  STORE_OPERATIONS,
  StoreErrorKind,
  type BusNames,
  type CacheUsageResponse,
  type CompactionRecord,
  type ContextAnchor,
  type ConversationId,
  type MemberId,
  type MemberRecord,
  type MemberUsage,
  type Message,
  type RunId,
  type RunRecord,
  type StoreError,
  type StoreOperation,
  type StoreOperationName,
  type StoreOperations,
  type StoreRequest,
  type StoreResponse,
  type ToolRoundRecord,
} from "@byok/contracts";
import { BusError, busRequest, type NatsConnection } from "@byok/platform";
import { failureKindOfBusError, failureKindOfStoreError, StoreFailure } from "./store-failure.ts";

export interface StoreClientOptions {
  /** How long one call waits for the store's reply before it fails as `unavailable`. */
  readonly timeoutMs: number;
}

/** run.begin's result: the run's record and the run it superseded ("" if none). */
export interface BegunRun {
  readonly run: RunRecord;
  readonly supersededRunId: string;
}

/** tool_round.create's result: the round (the stored one when `existing`). */
export interface CreatedToolRound {
  readonly round: ToolRoundRecord;
  readonly existing: boolean;
}

/** member.create's result: the member and its gateway key (shown once; the store keeps only a hash). */
export interface CreatedMember {
  readonly member: MemberRecord;
  readonly key: string;
}

/** A member.verify hit. */
export interface VerifiedMember {
  readonly memberId: MemberId;
  readonly name: string;
}

/** member.usage filter: "" = every member / unbounded; `since` and `until` are RFC 3339 (the store checks them). */
export interface UsageFilter {
  readonly memberId: string;
  readonly since: string;
  readonly until: string;
}

/** revision.messages with what the run worker needs besides the messages. */
export interface RevisionHistory {
  readonly messages: Message[];
  /** Stored message ids, parallel to `messages`. */
  readonly messageIds: string[];
  /** Set when the history starts at a compacted revision. */
  readonly compaction: CompactionRecord | undefined;
  /** The newest provider measurement of a prefix of this history. */
  readonly anchor: ContextAnchor | undefined;
}

/** revision.compact's result: the new revision and its whole history. */
export interface CompactedHistory {
  readonly revisionId: string;
  readonly messages: Message[];
}

/** usage.cache filter (as UsageFilter, plus how many conversations to list; 0 = the store's default). */
export interface CacheUsageFilter extends UsageFilter {
  readonly conversationLimit: number;
}

type WithError = { readonly error?: StoreError | undefined };

export class StoreClient {
  readonly #nc: NatsConnection;
  readonly #names: BusNames;
  readonly #timeoutMs: number;

  /** `names`: the deployment's bus names (the store serves `names.store(operation)`). */
  constructor(nc: NatsConnection, names: BusNames, options: StoreClientOptions) {
    this.#nc = nc;
    this.#names = names;
    this.#timeoutMs = options.timeoutMs;
  }

  /** Any store operation: resolves with its response (without `error`), or throws StoreFailure. */
  async call<K extends StoreOperationName>(operation: K, request: StoreRequest<K>): Promise<StoreResponse<K>> {
    const op = STORE_OPERATIONS[operation] as StoreOperation<StoreOperations[K]["request"], StoreOperations[K]["response"]>;
    let response: StoreResponse<K>;
    try {
      response = await busRequest(this.#nc, this.#names.store(op.name), op.request, request, op.response, { timeoutMs: this.#timeoutMs });
    } catch (cause) {
      if (cause instanceof BusError) throw new StoreFailure(failureKindOfBusError(cause.kind), op.name, cause.message, { cause });
      throw cause;
    }
    const error = (response as WithError).error;
    if (error !== undefined) {
      throw new StoreFailure(failureKindOfStoreError(error.kind), op.name, error.message !== "" ? error.message : (StoreErrorKind[error.kind] ?? String(error.kind)));
    }
    return response;
  }

  // ---- Conversation history ----

  /** history.import: the client's history becomes a revision of the conversation; its id ("" for no messages). */
  async importHistory(request: { conversationId: ConversationId; memberId: MemberId; messages: NonNullable<StoreRequest<"importHistory">["messages"]> }): Promise<string> {
    return (await this.call("importHistory", request)).revisionId;
  }

  /** revision.messages: the full history of a revision, oldest first. */
  async revisionMessages(revisionId: string): Promise<Message[]> {
    return (await this.call("getRevisionMessages", { revisionId })).messages;
  }

  /** revision.messages with the message ids, the chain's compaction and its context anchor ("" = empty history). */
  async revisionHistory(revisionId: string): Promise<RevisionHistory> {
    if (revisionId === "") return { messages: [], messageIds: [], compaction: undefined, anchor: undefined };
    const response = await this.call("getRevisionMessages", { revisionId });
    return { messages: response.messages, messageIds: response.messageIds, compaction: response.compaction, anchor: response.anchor };
  }

  /** revision.compact: the run's history replaced by a summary plus kept messages, as a new revision. */
  async compactHistory(request: StoreRequest<"compactHistory">): Promise<CompactedHistory> {
    const response = await this.call("compactHistory", request);
    return { revisionId: response.revisionId, messages: response.messages };
  }

  // ---- Runs ----

  /** run.begin (idempotent by run id): the run takes ownership of its conversation. */
  async beginRun(request: StoreRequest<"beginRun">): Promise<BegunRun> {
    const response = await this.call("beginRun", request);
    return { run: required(response.run, "run.begin", "run"), supersededRunId: response.supersededRunId };
  }

  /** run.append: appends to the run's head; the new revision id. */
  async appendMessages(request: StoreRequest<"appendMessages">): Promise<string> {
    return (await this.call("appendMessages", request)).revisionId;
  }

  /** run.finish: the run's record afterwards (the store keeps the first terminal status). */
  async finishRun(request: StoreRequest<"finishRun">): Promise<RunRecord> {
    return required((await this.call("finishRun", request)).run, "run.finish", "run");
  }

  /** run.get: the run's record; StoreFailure `not_found` while no worker has begun it. */
  async getRun(runId: RunId): Promise<RunRecord> {
    return required((await this.call("getRun", { runId })).run, "run.get", "run");
  }

  /** run.get, with a run nobody has begun yet as undefined. */
  async findRun(runId: RunId): Promise<RunRecord | undefined> {
    try {
      return await this.getRun(runId);
    } catch (error) {
      if (error instanceof StoreFailure && error.kind === "not_found") return undefined;
      throw error;
    }
  }

  // ---- Tool rounds ----

  /** tool_round.create (idempotent by round id and by provider call index). */
  async createToolRound(request: StoreRequest<"createToolRound">): Promise<CreatedToolRound> {
    const response = await this.call("createToolRound", request);
    return { round: required(response.round, "tool_round.create", "round"), existing: response.existing };
  }

  /** tool_round.commit_result: appends one result's pair. */
  commitToolResult(request: StoreRequest<"commitToolResult">): Promise<StoreResponse<"commitToolResult">> {
    return this.call("commitToolResult", request);
  }

  /** tool_round.get_open: the run's unsettled round, undefined when none. */
  async getOpenToolRound(runId: RunId): Promise<ToolRoundRecord | undefined> {
    return (await this.call("getOpenToolRound", { runId })).round;
  }

  // ---- Blobs (content-addressed: id = SHA-256 of the bytes) ----

  /** blob.put: stores the bytes (a no-op when they are stored already); their id. */
  async putBlob(data: Uint8Array): Promise<Uint8Array> {
    return (await this.call("putBlob", { data })).id;
  }

  /** blob.get: the blobs the store has, keyed by the lower-case hex of their id; missing ids are absent. */
  async getBlobs(ids: readonly Uint8Array[]): Promise<Map<string, Uint8Array>> {
    const found = new Map<string, Uint8Array>();
    if (ids.length === 0) return found;
    const response = await this.call("getBlobs", { ids: [...ids] });
    for (const blob of response.blobs) found.set(Buffer.from(blob.id).toString("hex"), blob.data);
    return found;
  }

  // ---- Members ----

  /** member.create: a new member and its gateway key. */
  async createMember(name: string): Promise<CreatedMember> {
    const response = await this.call("createMember", { name });
    const member = required(response.member, "member.create", "member");
    if (response.key === "") throw new StoreFailure("internal", "member.create", "the response has no key");
    return { member, key: response.key };
  }

  /** member.revoke (idempotent): the member's record; `not_found` for an unknown member id. */
  async revokeMember(memberId: string): Promise<MemberRecord> {
    return required((await this.call("revokeMember", { memberId })).member, "member.revoke", "member");
  }

  /** member.verify: whose gateway key this is; `not_found` for an unknown or revoked key. */
  async verifyMemberKey(key: string): Promise<VerifiedMember> {
    const response = await this.call("verifyMemberKey", { key });
    if (response.memberId === "") throw new StoreFailure("internal", "member.verify", "the response has no member id");
    return { memberId: parseMemberId(response.memberId), name: response.name };
  }

  /** member.list: oldest first; revoked members only with `includeRevoked`. */
  async listMembers(includeRevoked: boolean): Promise<MemberRecord[]> {
    return (await this.call("listMembers", { includeRevoked })).members;
  }

  /** member.usage: per-member sums over the runs in the range, ordered by member id. */
  async memberUsage(filter: UsageFilter): Promise<MemberUsage[]> {
    return (await this.call("memberUsage", { ...filter })).members;
  }

  /** usage.cache: cached / input token sums per conversation (newest first) and per model. */
  async cacheUsage(filter: CacheUsageFilter): Promise<Pick<CacheUsageResponse, "conversations" | "models">> {
    const response = await this.call("cacheUsage", { ...filter });
    return { conversations: response.conversations, models: response.models };
  }
}

function required<T>(value: T | undefined, operation: string, field: string): T {
  if (value === undefined) throw new StoreFailure("internal", operation, `the response has no ${field}`);
  return value;
}
