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
 *
 * One file on purpose, past the usual size: it is one class whose methods are
 * thin typed wrappers, a few lines each, over the single `call`. The request
 * and result types live in the generated contracts. Splitting it by operation
 * group would need a chain of base classes or mixins to keep one StoreClient
 * type for the services, and that costs more than the length does.
 */
import {
  parseMemberId,
  type AuditEntry,
  type PurgeCounts,
  STORE_OPERATIONS,
  StoreErrorKind,
  type BusNames,
  type CacheUsageResponse,
  type ConversationId,
  type BudgetRecord,
  type LeaseGrant,
  type LedgerEntry,
  type MemberId,
  type MemberKeyRecord,
  type MemberLimits,
  type MemberPolicy,
  type MemberRecord,
  type MemberUsage,
  type Message,
  type RunId,
  type RunRecord,
  type RunSpend,
  type SpendPoint,
  type StoreError,
  type StoreOperation,
  type StoreOperationName,
  type StoreOperations,
  type StoreRequest,
  type StoreResponse,
  type TeamRecord,
  type ToolRoundRecord,
} from "@byok/contracts";
import { BusError, BusPayloads, busRequest, type NatsConnection } from "@byok/platform";
import { historyOf, type AppendedMessages, type CompactedHistory, type KnownHistory, type RevisionHistory } from "./revision-history.ts";
import { failureKindOfBusError, failureKindOfStoreError, StoreFailure } from "./store-failure.ts";

export interface StoreClientOptions {
  /** How long one call waits for the store's reply before it fails as `unavailable`. */
  readonly timeoutMs: number;
}

/** run.begin's result: the run's record and the run it superseded ("" if none). */
export interface BegunRun {
  readonly run: RunRecord;
  readonly supersededRunId: string;
  /** A repeated start (once client ids all taken): the run that took them, "imported" for client history; "" otherwise. */
  readonly duplicateOfRunId: string;
  /** Asked with `withHistory` and the run is running: its head's history and its open tool round (undefined = none). */
  readonly next: { readonly history: RevisionHistory; readonly openRound: ToolRoundRecord | undefined } | undefined;
}

/** tool_round.create's result: the round (the stored one when `existing`). */
export interface CreatedToolRound {
  readonly round: ToolRoundRecord;
  readonly existing: boolean;
}

/** member.create's result: the member and its first gateway key (shown once; the store keeps only a hash). */
export interface CreatedMember {
  readonly member: MemberRecord;
  readonly key: string;
  readonly keyId: string;
}

/** member.create's options: team ("" / unset = the default team), the first key's label and expiry (RFC 3339). */
export interface CreateMemberOptions {
  readonly teamId?: string;
  readonly keyLabel?: string;
  readonly keyExpiresAt?: string;
}

/** A member.verify hit: the member, the key that matched and the member's team. */
export interface VerifiedMember {
  readonly memberId: MemberId;
  readonly name: string;
  readonly keyId: string;
  readonly teamId: string;
}

/** member.usage filter: "" = every member / unbounded; `since` and `until` are RFC 3339 (the store checks them). */
export interface UsageFilter {
  readonly memberId: string;
  readonly since: string;
  readonly until: string;
}

/** usage.cache filter (as UsageFilter, plus how many conversations to list; 0 = the store's default). */
export interface CacheUsageFilter extends UsageFilter {
  readonly conversationLimit: number;
}

/** Bytes of blob data per blob.put_many request: well under NATS's default 1 MiB payload limit. */
const PUT_BLOBS_BATCH_BYTES = 512 * 1024;

type WithError = { readonly error?: StoreError | undefined };

export class StoreClient {
  readonly #nc: NatsConnection;
  readonly #names: BusNames;
  readonly #timeoutMs: number;
  /** Requests and replies too large for one NATS message (a long history, a large tool result) go through the payload bucket. */
  readonly #payloads: BusPayloads;

  /** `names`: the deployment's bus names (the store serves `names.store(operation)`). */
  constructor(nc: NatsConnection, names: BusNames, options: StoreClientOptions) {
    this.#nc = nc;
    this.#names = names;
    this.#timeoutMs = options.timeoutMs;
    this.#payloads = BusPayloads.of(nc, names);
  }

  /** Any store operation: resolves with its response (without `error`), or throws StoreFailure. */
  async call<K extends StoreOperationName>(operation: K, request: StoreRequest<K>): Promise<StoreResponse<K>> {
    const op = STORE_OPERATIONS[operation] as StoreOperation<StoreOperations[K]["request"], StoreOperations[K]["response"]>;
    let response: StoreResponse<K>;
    try {
      response = await busRequest(this.#nc, this.#names.store(op.name), op.request, request, op.response, { timeoutMs: this.#timeoutMs, payloads: this.#payloads });
    } catch (cause) {
      if (cause instanceof BusError) throw new StoreFailure(failureKindOfBusError(cause.kind), op.name, cause.message, { cause });
      throw cause;
    }
    const error = (response as WithError).error;
    if (error !== undefined) throw storeFailureOf(op.name, error);
    return response;
  }

  // ---- Conversation history ----

  /**
   * history.import: the client's history becomes a revision of the conversation; its id ("" for no messages).
   * With `baseRevisionId`, `messages` continue that revision (only what is new is sent).
   */
  async importHistory(request: {
    conversationId: ConversationId;
    memberId: MemberId;
    messages: NonNullable<StoreRequest<"importHistory">["messages"]>;
    baseRevisionId?: string;
  }): Promise<string> {
    return (await this.call("importHistory", request)).revisionId;
  }

  /** revision.messages: the full history of a revision, oldest first. */
  async revisionMessages(revisionId: string): Promise<Message[]> {
    return (await this.call("getRevisionMessages", { revisionId })).messages;
  }

  /**
   * revision.messages with the message ids, the chain's compaction and its context anchor ("" = empty history).
   * With `known` (a revision whose history the caller holds), only what comes after it travels when it is
   * in the chain; the result is the whole history either way.
   */
  async revisionHistory(revisionId: string, known?: KnownHistory): Promise<RevisionHistory> {
    if (revisionId === "") return { messages: [], messageIds: [], compaction: undefined, anchor: undefined };
    const response = await this.call("getRevisionMessages", { revisionId, ...(known === undefined ? {} : { knownRevisionId: known.revisionId }) });
    return historyOf(response, known);
  }

  /** revision.compact: the run's history replaced by a summary plus kept messages, as a new revision. */
  async compactHistory(request: StoreRequest<"compactHistory">): Promise<CompactedHistory> {
    const response = await this.call("compactHistory", request);
    return { revisionId: response.revisionId, messages: response.messages };
  }

  // ---- Runs ----

  /**
   * run.begin (idempotent by run id): the run takes ownership of its conversation.
   * With `withHistory`, the same reply carries what the run reads next (BegunRun.next), and with `known`
   * only the part of the head's history after that revision travels.
   */
  async beginRun(request: StoreRequest<"beginRun">, known?: KnownHistory): Promise<BegunRun> {
    const response = await this.call("beginRun", { ...request, ...(known === undefined || request.withHistory !== true ? {} : { knownRevisionId: known.revisionId }) });
    const history = response.history;
    return {
      run: required(response.run, "run.begin", "run"),
      supersededRunId: response.supersededRunId,
      duplicateOfRunId: response.duplicateOfRunId,
      next: history === undefined ? undefined : { history: historyOf(history, known), openRound: response.openRound },
    };
  }

  /** run.append: appends to the run's head; the new revision id. */
  /** run.append: the new head, and the appended messages' stored ids when the store kept them as sent (else empty). */
  async appendMessages(request: StoreRequest<"appendMessages">): Promise<AppendedMessages> {
    const response = await this.call("appendMessages", request);
    return { revisionId: response.revisionId, messageIds: response.messageIds };
  }

  /** run.finish: the run's record afterwards (the store keeps the first terminal status). */
  async finishRun(request: StoreRequest<"finishRun">): Promise<RunRecord> {
    return required((await this.call("finishRun", request)).run, "run.finish", "run");
  }

  /** run.get: the run's record; StoreFailure `not_found` while no worker has begun it. */
  async getRun(runId: RunId): Promise<RunRecord> {
    return required((await this.call("getRun", { runId })).run, "run.get", "run");
  }

  /** run.children: the sub-agent runs `parentRunId` started, oldest first. */
  async listChildRuns(parentRunId: RunId): Promise<RunRecord[]> {
    return (await this.call("listChildRuns", { parentRunId })).runs;
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

  /** tool_result.find: a result some run of the conversation committed for the same call (id, tool, arguments); undefined when none. */
  async findToolResult(
    conversationId: ConversationId,
    call: { callId: string; name: string; argumentsJson: string },
  ): Promise<{ content: string; isError: boolean; runId: string } | undefined> {
    const response = await this.call("findToolResult", { conversationId, ...call });
    return response.found ? { content: response.content, isError: response.isError, runId: response.runId } : undefined;
  }

  /** tool_round.get_open: the run's unsettled round, undefined when none. */
  async getOpenToolRound(runId: RunId): Promise<ToolRoundRecord | undefined> {
    return (await this.call("getOpenToolRound", { runId })).round;
  }

  // ---- Blobs (content-addressed: id = SHA-256 of the bytes) ----

  /**
   * blob.put: stores the bytes (a no-op when they are stored already); their id.
   * `conversationId`: the conversation that uses the blob (the retention job
   * deletes a blob only when no conversation that refers to it keeps its content).
   */
  async putBlob(data: Uint8Array, conversationId = ""): Promise<Uint8Array> {
    return (await this.call("putBlob", { data, conversationId })).id;
  }

  /**
   * blob.put_many: stores several blobs of one conversation, in as few
   * requests as fit the bus's message size (PUT_BLOBS_BATCH_BYTES each; a
   * larger blob goes alone).
   */
  async putBlobs(data: readonly Uint8Array[], conversationId = ""): Promise<void> {
    let batch: Uint8Array[] = [];
    let bytes = 0;
    const sends: Array<Promise<unknown>> = [];
    const flush = (): void => {
      if (batch.length === 0) return;
      sends.push(this.call("putBlobs", { data: batch, conversationId }));
      batch = [];
      bytes = 0;
    };
    for (const blob of data) {
      if (bytes + blob.length > PUT_BLOBS_BATCH_BYTES) flush();
      batch.push(blob);
      bytes += blob.length;
    }
    flush();
    await Promise.all(sends);
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

  /** member.create: a new member and its first gateway key. */
  async createMember(name: string, options: CreateMemberOptions = {}): Promise<CreatedMember> {
    const response = await this.call("createMember", { name, ...options });
    const member = required(response.member, "member.create", "member");
    if (response.key === "") throw new StoreFailure("internal", "member.create", "the response has no key");
    return { member, key: response.key, keyId: response.keyId };
  }

  /** member.revoke (idempotent): the member's record; `not_found` for an unknown member id. */
  async revokeMember(memberId: string): Promise<MemberRecord> {
    return required((await this.call("revokeMember", { memberId })).member, "member.revoke", "member");
  }

  /** member.verify: whose gateway key this is; `not_found` for an unknown or revoked key. */
  async verifyMemberKey(key: string): Promise<VerifiedMember> {
    const response = await this.call("verifyMemberKey", { key });
    if (response.memberId === "") throw new StoreFailure("internal", "member.verify", "the response has no member id");
    return { memberId: parseMemberId(response.memberId), name: response.name, keyId: response.keyId, teamId: response.teamId };
  }

  /** member.list: oldest first; revoked members only with `includeRevoked`; `teamId` "" = every team. */
  async listMembers(includeRevoked: boolean, teamId = ""): Promise<MemberRecord[]> {
    return (await this.call("listMembers", { includeRevoked, teamId })).members;
  }

  /** member.usage: per-member sums over the runs in the range (and ledger cost), ordered by member id. */
  async memberUsage(filter: UsageFilter): Promise<MemberUsage[]> {
    return (await this.call("memberUsage", { ...filter })).members;
  }

  /** usage.cache: cached / input token sums per conversation (newest first) and per model. */
  async cacheUsage(filter: CacheUsageFilter): Promise<Pick<CacheUsageResponse, "conversations" | "models">> {
    const response = await this.call("cacheUsage", { ...filter });
    return { conversations: response.conversations, models: response.models };
  }
  /** member.get: `not_found` for an unknown member. */
  async getMember(memberId: string): Promise<MemberRecord> {
    return required((await this.call("getMember", { memberId })).member, "member.get", "member");
  }

  /** member.set_team: the member's record in its new team. */
  async setMemberTeam(memberId: string, teamId: string): Promise<MemberRecord> {
    return required((await this.call("setMemberTeam", { memberId, teamId })).member, "member.set_team", "member");
  }

  /** member.policy: team, allowed models, budgets and limits that apply to a member's calls. */
  async memberPolicy(memberId: MemberId): Promise<MemberPolicy> {
    return required((await this.call("getMemberPolicy", { memberId })).policy, "member.policy", "policy");
  }

  // ---- Teams ----

  /** team.create: `invalid` for an empty or taken name. */
  async createTeam(request: StoreRequest<"createTeam">): Promise<TeamRecord> {
    return required((await this.call("createTeam", request)).team, "team.create", "team");
  }

  /** team.update: replaces name, allowed models and retention. */
  async updateTeam(request: StoreRequest<"updateTeam">): Promise<TeamRecord> {
    return required((await this.call("updateTeam", request)).team, "team.update", "team");
  }

  async getTeam(teamId: string): Promise<TeamRecord> {
    return required((await this.call("getTeam", { teamId })).team, "team.get", "team");
  }

  /** team.delete: `invalid` for the default team or a team with members. */
  async deleteTeam(teamId: string): Promise<void> {
    await this.call("deleteTeam", { teamId });
  }

  /** team.list: the default team first, then by name. */
  async listTeams(): Promise<TeamRecord[]> {
    return (await this.call("listTeams", {})).teams;
  }

  // ---- Member keys ----

  /** key.create: another key for a member (the secret is shown once). */
  async createMemberKey(request: StoreRequest<"createMemberKey">): Promise<CreatedMemberKey> {
    const response = await this.call("createMemberKey", request);
    if (response.secret === "") throw new StoreFailure("internal", "key.create", "the response has no secret");
    return { key: required(response.key, "key.create", "key"), secret: response.secret };
  }

  /** key.list: newest first; only active keys unless `includeInactive`. */
  async listMemberKeys(memberId: string, includeInactive = false): Promise<MemberKeyRecord[]> {
    return (await this.call("listMemberKeys", { memberId, includeInactive })).keys;
  }

  /** key.revoke (idempotent). */
  async revokeMemberKey(keyId: string): Promise<MemberKeyRecord> {
    return required((await this.call("revokeMemberKey", { keyId })).key, "key.revoke", "key");
  }

  /** key.rotate: a new key replaces an active one (the old one stops now or after `graceSeconds`). */
  async rotateMemberKey(request: StoreRequest<"rotateMemberKey">): Promise<RotatedMemberKey> {
    const response = await this.call("rotateMemberKey", request);
    if (response.secret === "") throw new StoreFailure("internal", "key.rotate", "the response has no secret");
    return { key: required(response.key, "key.rotate", "key"), secret: response.secret, previous: required(response.previous, "key.rotate", "previous") };
  }

  // ---- Budgets and limits ----

  /** budget.set: creates or replaces the budget of (scope target, model, period). */
  async setBudget(request: StoreRequest<"setBudget">): Promise<BudgetRecord> {
    return required((await this.call("setBudget", request)).budget, "budget.set", "budget");
  }

  async deleteBudget(budgetId: string): Promise<void> {
    await this.call("deleteBudget", { budgetId });
  }

  /** budget.list: with the current window's charge; `memberId` also lists its team's budgets. */
  async listBudgets(filter: { memberId?: string; teamId?: string } = {}): Promise<BudgetRecord[]> {
    return (await this.call("listBudgets", filter)).budgets;
  }

  async getMemberLimits(memberId: string): Promise<MemberLimits> {
    return required((await this.call("getMemberLimits", { memberId })).limits, "limits.get", "limits");
  }

  /** limits.set: replaces the member's limits (unset field = no limit). */
  async setMemberLimits(limits: NonNullable<StoreRequest<"setMemberLimits">["limits"]>): Promise<MemberLimits> {
    return required((await this.call("setMemberLimits", { limits })).limits, "limits.set", "limits");
  }

  // ---- Ledger ----

  /** ledger.list: newest first. */
  async listLedger(filter: StoreRequest<"listLedger">): Promise<LedgerEntry[]> {
    return (await this.call("listLedger", filter)).entries;
  }

  /** ledger.series: spend and tokens per hour/day and member/team/model. */
  async spendSeries(request: StoreRequest<"spendSeries">): Promise<SpendPoint[]> {
    return (await this.call("spendSeries", request)).points;
  }

  /** run.recent: newest first, with each run's cost. */
  async recentRuns(request: StoreRequest<"recentRuns"> = {}): Promise<RunSpend[]> {
    return (await this.call("recentRuns", request)).runs;
  }

  // ---- The provider gateway's accounting ----

  /** accounting.acquire: one grant per ask, in order. */
  async acquireLeases(request: StoreRequest<"acquireLeases">): Promise<LeaseGrant[]> {
    return (await this.call("acquireLeases", request)).grants;
  }

  /** accounting.release: shrink, close and renew leases; the renew ids that are gone. */
  async releaseLeases(request: StoreRequest<"releaseLeases">): Promise<string[]> {
    return (await this.call("releaseLeases", request)).goneLeaseIds;
  }

  /** accounting.settle: the call's ledger row and its charges (idempotent by ticket). */
  async settleCall(request: StoreRequest<"settleCall">): Promise<SettledCall> {
    const response = await this.call("settleCall", request);
    return { recorded: response.recorded, attempt: response.attempt };
  }

  /** accounting.settle_many: several settled calls in one transaction; per call its result or the store's refusal (in order). */
  async settleCalls(calls: ReadonlyArray<StoreRequest<"settleCall">>): Promise<Array<SettledCall | StoreFailure>> {
    const response = await this.call("settleCalls", { calls: [...calls] });
    return response.results.map((result) => (result.error === undefined ? { recorded: result.recorded, attempt: result.attempt } : storeFailureOf("accounting.settle_many", result.error)));
  }

  // ---- Audit log and retention ----

  /** audit.list: newest first (the admin actions and run starts the store recorded). */
  async listAudit(filter: StoreRequest<"listAudit"> = {}): Promise<AuditEntry[]> {
    return (await this.call("listAudit", filter)).entries;
  }

  /** retention.purge: a retention pass now; what it deleted (`not_active` while another store replica runs one). */
  async purgeContent(): Promise<PurgeCounts> {
    return required((await this.call("purgeContent", {})).purge, "retention.purge", "purge");
  }

  /** accounting.run_slot: whether the run may take one of its member's concurrent-run slots. */
  async takeRunSlot(runId: RunId, memberId: MemberId): Promise<RunSlot> {
    const response = await this.call("takeRunSlot", { runId, memberId });
    return { admitted: response.admitted, limit: response.limit, running: response.running };
  }

  /** accounting.request_slot: whether an HTTP-front request may take one of its member's concurrent-run slots (held by `holder` for `ttlMs` unless renewed). */
  async takeRequestSlot(requestId: string, memberId: MemberId, holder: string, ttlMs: number): Promise<RunSlot> {
    const response = await this.call("takeRequestSlot", { requestId, memberId, holder, ttlMs });
    return { admitted: response.admitted, limit: response.limit, running: response.running };
  }

  /** accounting.request_slot_keep: renew the slots of requests still running, release those that ended. */
  async keepRequestSlots(renew: readonly string[], release: readonly string[], ttlMs: number): Promise<void> {
    await this.call("keepRequestSlots", { renewRequestIds: [...renew], releaseRequestIds: [...release], ttlMs });
  }
}

/** key.create's result: the key's record and its secret (shown once). */
export interface CreatedMemberKey {
  readonly key: MemberKeyRecord;
  readonly secret: string;
}

/** key.rotate's result: the new key, its secret and the replaced key. */
export interface RotatedMemberKey extends CreatedMemberKey {
  readonly previous: MemberKeyRecord;
}

/** accounting.settle's result: false = this admission was settled before. */
export interface SettledCall {
  readonly recorded: boolean;
  readonly attempt: number;
}

/** accounting.run_slot's answer; `limit` undefined = no limit. */
export interface RunSlot {
  readonly admitted: boolean;
  readonly limit: number | undefined;
  readonly running: number;
}

function required<T>(value: T | undefined, operation: string, field: string): T {
  if (value === undefined) throw new StoreFailure("internal", operation, `the response has no ${field}`);
  return value;
}

/** The StoreFailure a StoreError in an answer of `operation` stands for. */
function storeFailureOf(operation: string, error: NonNullable<WithError["error"]>): StoreFailure {
  return new StoreFailure(failureKindOfStoreError(error.kind), operation, error.message !== "" ? error.message : (StoreErrorKind[error.kind] ?? String(error.kind)));
}
