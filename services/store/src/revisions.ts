/**
 * Immutable history: messages and revisions. A revision is its parent plus the
 * messages it appends; nothing here ever updates or deletes a row.
 */
import { randomUUID } from "node:crypto";
import type { JsonValue } from "@bufbuild/protobuf";
import type { Message } from "@byok/contracts";
import { preparedQuery, type Queryable, type Transaction } from "./database.ts";
import type { ContextAnchorRow } from "./context-anchors.ts";
import { decodeStoredMessage, prefixDigests, type CanonicalMessage } from "./message-codec.ts";

export interface RevisionRow {
  readonly id: string;
  readonly conversationId: string;
  readonly parentId: string | null;
  /** Messages in the full history up to and including this revision. */
  readonly messageCount: number;
  readonly digest: Buffer;
}

export interface RevisionHistory {
  /** Revision ids from the root to the requested revision. */
  readonly chain: string[];
  readonly messageIds: string[];
  readonly messages: Message[];
  /** Set when the chain's root is a compacted revision. */
  readonly compaction: CompactionOfChain | undefined;
  /** Set when this is only what comes after that (known) revision. */
  readonly continues?: string;
  /** The newest context anchor among the revisions read (the known revision included). */
  readonly anchor: ContextAnchorRow | undefined;
}

/** The compaction a chain starts from (its root revision replaced `sourceRevisionId`). */
export interface CompactionOfChain {
  readonly revisionId: string;
  readonly sourceRevisionId: string;
  readonly summarizedCount: number;
  readonly runId: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Revision ids are UUIDs; anything else cannot name a revision. */
export function isRevisionId(value: string): boolean {
  return UUID.test(value);
}

interface RevisionDbRow {
  id: string;
  conversation_id: string;
  parent_id: string | null;
  message_count: number;
  digest: Buffer;
}

function fromDb(row: RevisionDbRow): RevisionRow {
  return { id: row.id, conversationId: row.conversation_id, parentId: row.parent_id, messageCount: row.message_count, digest: row.digest };
}

const REVISION_COLUMNS = "id, conversation_id, parent_id, message_count, digest";

export async function findRevision(db: Queryable, revisionId: string): Promise<RevisionRow | undefined> {
  if (!isRevisionId(revisionId)) return undefined;
  const result = await preparedQuery<RevisionDbRow>(db, `SELECT ${REVISION_COLUMNS} FROM revisions WHERE id = $1`, [revisionId]);
  const row = result.rows[0];
  return row ? fromDb(row) : undefined;
}

/** The revision a run appended under `appendKey`, if it did. */
export async function findRunAppend(db: Queryable, runId: string, appendKey: string): Promise<RevisionRow | undefined> {
  const result = await preparedQuery<RevisionDbRow>(db, `SELECT ${REVISION_COLUMNS} FROM revisions WHERE run_id = $1 AND append_key = $2`, [runId, appendKey]);
  const row = result.rows[0];
  return row ? fromDb(row) : undefined;
}

/** The SQL of the head revision's id of the conversation of run `$1`. */
const HEAD_OF_RUN = "SELECT c.head_revision_id FROM runs r JOIN conversations c ON c.id = r.conversation_id WHERE r.id = $1";

/**
 * The head revision of `runId`'s conversation, read by this statement: issued
 * behind the statement that locks the conversation (in one round trip with it),
 * it reads the head the lock holds. Undefined: no run, or an empty conversation.
 */
export async function findRunHead(db: Queryable, runId: string): Promise<RevisionRow | undefined> {
  const result = await preparedQuery<RevisionDbRow>(db, `SELECT ${REVISION_COLUMNS} FROM revisions WHERE id = (${HEAD_OF_RUN})`, [runId]);
  const row = result.rows[0];
  return row ? fromDb(row) : undefined;
}

/**
 * findRunAppend and the head of the run's conversation in one query (the head
 * is read by this statement): issued behind the statement that locks
 * the conversation (write-guards.ts lockRunConversation, in one round trip with
 * it), it reads the head the lock holds.
 */
export async function findRunAppendAndHead(
  db: Queryable,
  runId: string,
  appendKey: string,
): Promise<{ readonly earlier: RevisionRow | undefined; readonly head: RevisionRow | undefined }> {
  const result = await preparedQuery<RevisionDbRow & { earlier: boolean; is_head: boolean | null }>(
    db,
    `SELECT ${REVISION_COLUMNS}, (run_id = $1 AND append_key = $2) AS earlier, id = (${HEAD_OF_RUN}) AS is_head FROM revisions
      WHERE (run_id = $1 AND append_key = $2) OR id = (${HEAD_OF_RUN})`,
    [runId, appendKey],
  );
  let earlier: RevisionRow | undefined;
  let head: RevisionRow | undefined;
  for (const row of result.rows) {
    if (row.earlier === true) earlier = fromDb(row);
    if (row.is_head === true) head = fromDb(row);
  }
  return { earlier, head };
}

/**
 * The revision of `conversationId` whose full history has the most messages
 * among those whose chain digest is in `digests` (oldest first on ties).
 */
export async function findLongestDigestMatch(db: Queryable, conversationId: string, digests: readonly Buffer[]): Promise<RevisionRow | undefined> {
  if (digests.length === 0) return undefined;
  const result = await preparedQuery<RevisionDbRow>(
    db,
    `SELECT ${REVISION_COLUMNS} FROM revisions
      WHERE conversation_id = $1 AND digest = ANY($2::bytea[])
      ORDER BY message_count DESC, created_at ASC, id ASC LIMIT 1`,
    [conversationId, digests],
  );
  const row = result.rows[0];
  return row ? fromDb(row) : undefined;
}

export interface AppendRevisionInput {
  readonly conversationId: string;
  readonly parent: RevisionRow | null;
  readonly messages: readonly CanonicalMessage[];
  /** Set for appends made by a run (idempotency key unique per run). */
  readonly run?: { readonly runId: string; readonly appendKey: string };
}

export interface CompactedRevisionInput {
  readonly conversationId: string;
  /** The head the compaction replaces. */
  readonly source: RevisionRow;
  readonly summary: CanonicalMessage;
  /** Kept messages of the source history, in order: their stored ids and canonical form. */
  readonly kept: ReadonlyArray<{ readonly id: string; readonly message: CanonicalMessage }>;
  readonly summarizedCount: number;
  readonly run: { readonly runId: string; readonly appendKey: string };
}

/**
 * Inserts the summary message and a revision that starts a new chain: the
 * summary, then the kept messages (the same message rows, not copies). Its
 * digest is the chain digest of that history from scratch, as if a client had
 * imported it, so the next turn's checkpoint finds it.
 */
export async function insertCompactedRevision(tx: Transaction, input: CompactedRevisionInput): Promise<RevisionRow> {
  const summaryId = randomUUID();
  await preparedQuery(tx, "INSERT INTO messages (id, conversation_id, body, digest) VALUES ($1, $2, $3::jsonb, $4)", [
    summaryId,
    input.conversationId,
    JSON.stringify(input.summary.json),
    input.summary.digest,
  ]);
  const history = [input.summary, ...input.kept.map((k) => k.message)];
  const digests = prefixDigests(null, history);
  const revision: RevisionRow = {
    id: randomUUID(),
    conversationId: input.conversationId,
    parentId: null,
    messageCount: history.length,
    digest: digests[digests.length - 1] as Buffer,
  };
  await preparedQuery(
    tx,
    `INSERT INTO revisions (id, conversation_id, parent_id, message_ids, message_count, digest, run_id, append_key, compacted_from_id, summarized_count)
     VALUES ($1, $2, NULL, $3::uuid[], $4, $5, $6, $7, $8, $9)`,
    [
      revision.id,
      revision.conversationId,
      [summaryId, ...input.kept.map((k) => k.id)],
      revision.messageCount,
      revision.digest,
      input.run.runId,
      input.run.appendKey,
      input.source.id,
      input.summarizedCount,
    ],
  );
  return revision;
}

/** An appended revision with the ids of the message rows it appended, in order. */
export interface AppendedRevision extends RevisionRow {
  readonly messageIds: readonly string[];
}

/** The two writes of an append; their parameters are the values of `prepareAppend` ($1-$10). */
const APPEND_MESSAGES = `INSERT INTO messages (id, conversation_id, body, digest)
       SELECT id, $2, body, digest FROM unnest($4::uuid[], $9::jsonb[], $10::bytea[]) AS m(id, body, digest)`;
const APPEND_REVISION = `INSERT INTO revisions (id, conversation_id, parent_id, message_ids, message_count, digest, run_id, append_key)
     VALUES ($1, $2, $3, $4::uuid[], $5, $6, $7, $8)`;

/**
 * An append's writes as data-modifying CTEs, for a statement that does more
 * in the same round trip (run-rows.ts insertActiveRun): parameters $1-$10 are
 * `PreparedAppend.values`, $1 is the new revision's id.
 */
export const APPEND_CTES = `append_messages AS (${APPEND_MESSAGES}), append_revision AS (${APPEND_REVISION})`;

/** An append not written yet: the revision it makes and the parameters of its writes. */
export interface PreparedAppend {
  readonly revision: AppendedRevision;
  readonly values: readonly unknown[];
}

/** The ids, digest and parameters of appending `input.messages` onto `input.parent`. */
export function prepareAppend(input: AppendRevisionInput): PreparedAppend {
  if (input.messages.length === 0) throw new Error("appendRevision needs at least one message");
  const messageIds = input.messages.map(() => randomUUID());
  const digests = prefixDigests(input.parent?.digest ?? null, input.messages);
  const digest = digests[digests.length - 1] as Buffer;
  const revision: AppendedRevision = {
    id: randomUUID(),
    conversationId: input.conversationId,
    parentId: input.parent?.id ?? null,
    messageCount: (input.parent?.messageCount ?? 0) + input.messages.length,
    digest,
    messageIds,
  };
  const values = [
    revision.id,
    revision.conversationId,
    revision.parentId,
    messageIds,
    revision.messageCount,
    revision.digest,
    input.run?.runId ?? null,
    input.run?.appendKey ?? null,
    input.messages.map((m) => JSON.stringify(m.json)),
    input.messages.map((m) => m.digest),
  ];
  return { revision, values };
}

/** Inserts the messages and one revision appending them onto `parent`. */
export async function appendRevision(tx: Transaction, input: AppendRevisionInput): Promise<AppendedRevision> {
  const { revision, values } = prepareAppend(input);
  // One statement (one round trip) for both tables: the messages, then the revision listing them.
  await preparedQuery(tx, `WITH inserted AS (${APPEND_MESSAGES}) ${APPEND_REVISION}`, [...values]);
  return revision;
}

/** Messages appended by one revision (not its ancestors), in order. */
export async function loadRevisionOwnMessages(db: Queryable, revisionId: string): Promise<Message[]> {
  const result = await preparedQuery<{ body: JsonValue }>(
    db,
    `SELECT m.body FROM revisions r
       CROSS JOIN LATERAL unnest(r.message_ids) WITH ORDINALITY AS x(message_id, position)
       JOIN messages m ON m.id = x.message_id
      WHERE r.id = $1 ORDER BY x.position`,
    [revisionId],
  );
  return result.rows.map((r) => decodeStoredMessage(r.body));
}

interface ChainRow {
  id: string;
  message_ids: string[];
  compacted_from_id: string | null;
  summarized_count: number | null;
  run_id: string | null;
  /** The revision's own message bodies, in order (json_agg: one JSON text per row). */
  bodies: JsonValue[] | null;
  anchor_revision_id: string | null;
  anchor_message_count: number | null;
  anchor_input_tokens: string | null;
}

/**
 * One statement for the chain, its message bodies and its newest context
 * anchor (the anchor columns repeat on every row). `$2` is the known revision:
 * the walk stops there (included); NULL walks to the root.
 *
 * The anchor is looked up by each chain revision's id (the LIMIT keeps the
 * lateral subquery a probe of the primary key): as `revision_id IN (SELECT id
 * FROM chain)` Postgres planned a hash of every conversation's anchors, so each
 * continued turn read the whole table. Exported for the test that reads its
 * plan (query-plans.int.test.ts).
 */
export const CHAIN_QUERY = `WITH RECURSIVE chain AS (
       SELECT id, parent_id, message_ids, compacted_from_id, summarized_count, run_id, 0 AS depth FROM revisions WHERE id = $1
       UNION ALL
       SELECT r.id, r.parent_id, r.message_ids, r.compacted_from_id, r.summarized_count, r.run_id, c.depth + 1
         FROM revisions r JOIN chain c ON r.id = c.parent_id WHERE $2::uuid IS NULL OR c.id <> $2::uuid
     ),
     anchor AS (
       SELECT a.revision_id, a.message_count, a.input_tokens
         FROM chain c CROSS JOIN LATERAL (SELECT revision_id, message_count, input_tokens FROM context_anchors WHERE revision_id = c.id LIMIT 1) a
        ORDER BY a.message_count DESC LIMIT 1
     )
     SELECT c.id, c.message_ids, c.compacted_from_id, c.summarized_count, c.run_id,
            (SELECT json_agg(m.body ORDER BY x.position)
               FROM unnest(c.message_ids) WITH ORDINALITY AS x(message_id, position) JOIN messages m ON m.id = x.message_id) AS bodies,
            a.revision_id AS anchor_revision_id, a.message_count AS anchor_message_count, a.input_tokens::text AS anchor_input_tokens
       FROM chain c LEFT JOIN anchor a ON true
      ORDER BY c.depth DESC`;

/**
 * Full history of a revision, oldest message first; undefined for an unknown revision.
 * With `knownId` in its chain: only what comes after that revision (`continues` = knownId;
 * `compaction` then only if one of those revisions starts the chain, which cannot happen).
 * `anchor` is the newest context anchor of the chain read (the known revision included).
 */
export async function loadRevisionHistory(db: Queryable, revisionId: string, knownId = ""): Promise<RevisionHistory | undefined> {
  if (!isRevisionId(revisionId)) return undefined;
  const since = knownId !== "" && isRevisionId(knownId);
  const chain = await preparedQuery<ChainRow>(db, CHAIN_QUERY, [revisionId, since ? knownId : null]);
  let rows = chain.rows;
  const first = rows[0];
  const anchor: ContextAnchorRow | undefined =
    first?.anchor_revision_id == null
      ? undefined
      : { revisionId: first.anchor_revision_id, messageCount: first.anchor_message_count ?? 0, inputTokens: BigInt(first.anchor_input_tokens ?? "0") };
  const continues = since && first?.id === knownId;
  if (continues) rows = rows.slice(1);
  const root = rows[0];
  if (root === undefined && !continues) return undefined;
  const compaction: CompactionOfChain | undefined =
    continues || root === undefined || root.compacted_from_id === null
      ? undefined
      : { revisionId: root.id, sourceRevisionId: root.compacted_from_id, summarizedCount: root.summarized_count ?? 0, runId: root.run_id ?? "" };
  const messageIds: string[] = [];
  const messages: Message[] = [];
  for (const row of rows) {
    const bodies = row.bodies ?? [];
    if (bodies.length !== row.message_ids.length) throw new Error(`revision ${row.id} references missing messages`);
    for (let i = 0; i < bodies.length; i++) {
      messageIds.push(row.message_ids[i] as string);
      messages.push(decodeStoredMessage(bodies[i] as JsonValue));
    }
  }
  return { chain: rows.map((r) => r.id), messageIds, messages, compaction, anchor, ...(continues ? { continues: knownId } : {}) };
}
