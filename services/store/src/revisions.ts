/**
 * Immutable history: messages and revisions. A revision is its parent plus the
 * messages it appends; nothing here ever updates or deletes a row.
 */
import { randomUUID } from "node:crypto";
import type { JsonValue } from "@bufbuild/protobuf";
import type { Message } from "@byok/contracts";
import { preparedQuery, type Queryable, type Transaction } from "./database.ts";
import { fromStoredJson, prefixDigests, type CanonicalMessage } from "./message-codec.ts";

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

/** Inserts the messages and one revision appending them onto `parent`. */
export async function appendRevision(tx: Transaction, input: AppendRevisionInput): Promise<RevisionRow> {
  if (input.messages.length === 0) throw new Error("appendRevision needs at least one message");
  const messageIds = input.messages.map(() => randomUUID());
  await preparedQuery(
    tx,
    `INSERT INTO messages (id, conversation_id, body, digest)
     SELECT id, $1, body, digest FROM unnest($2::uuid[], $3::jsonb[], $4::bytea[]) AS m(id, body, digest)`,
    [input.conversationId, messageIds, input.messages.map((m) => JSON.stringify(m.json)), input.messages.map((m) => m.digest)],
  );
  const digests = prefixDigests(input.parent?.digest ?? null, input.messages);
  const digest = digests[digests.length - 1] as Buffer;
  const revision: RevisionRow = {
    id: randomUUID(),
    conversationId: input.conversationId,
    parentId: input.parent?.id ?? null,
    messageCount: (input.parent?.messageCount ?? 0) + input.messages.length,
    digest,
  };
  await preparedQuery(
    tx,
    `INSERT INTO revisions (id, conversation_id, parent_id, message_ids, message_count, digest, run_id, append_key)
     VALUES ($1, $2, $3, $4::uuid[], $5, $6, $7, $8)`,
    [revision.id, revision.conversationId, revision.parentId, messageIds, revision.messageCount, revision.digest, input.run?.runId ?? null, input.run?.appendKey ?? null],
  );
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
  return result.rows.map((r) => fromStoredJson(r.body).message);
}

interface ChainRow {
  id: string;
  message_ids: string[];
  compacted_from_id: string | null;
  summarized_count: number | null;
  run_id: string | null;
}

const CHAIN_QUERY = `WITH RECURSIVE chain AS (
       SELECT id, parent_id, message_ids, compacted_from_id, summarized_count, run_id, 0 AS depth FROM revisions WHERE id = $1
       UNION ALL
       SELECT r.id, r.parent_id, r.message_ids, r.compacted_from_id, r.summarized_count, r.run_id, c.depth + 1
         FROM revisions r JOIN chain c ON r.id = c.parent_id
     )
     SELECT id, message_ids, compacted_from_id, summarized_count, run_id FROM chain ORDER BY depth DESC`;

/** The chain from `revisionId` back to `knownId` (included) or to its root when `knownId` is not in it. */
const CHAIN_SINCE_QUERY = `WITH RECURSIVE chain AS (
       SELECT id, parent_id, message_ids, compacted_from_id, summarized_count, run_id, 0 AS depth FROM revisions WHERE id = $1
       UNION ALL
       SELECT r.id, r.parent_id, r.message_ids, r.compacted_from_id, r.summarized_count, r.run_id, c.depth + 1
         FROM revisions r JOIN chain c ON r.id = c.parent_id WHERE c.id <> $2::uuid
     )
     SELECT id, message_ids, compacted_from_id, summarized_count, run_id FROM chain ORDER BY depth DESC`;

/**
 * Full history of a revision, oldest message first; undefined for an unknown revision.
 * With `knownId` in its chain: only what comes after that revision (`continues` = knownId;
 * `compaction` then only if one of those revisions starts the chain, which cannot happen).
 */
export async function loadRevisionHistory(db: Queryable, revisionId: string, knownId = ""): Promise<RevisionHistory | undefined> {
  if (!isRevisionId(revisionId)) return undefined;
  const since = knownId !== "" && isRevisionId(knownId);
  const chain = await preparedQuery<ChainRow>(db, since ? CHAIN_SINCE_QUERY : CHAIN_QUERY, since ? [revisionId, knownId] : [revisionId]);
  let rows = chain.rows;
  const continues = since && rows[0]?.id === knownId;
  if (continues) rows = rows.slice(1);
  const root = rows[0];
  if (root === undefined && !continues) return undefined;
  const compaction: CompactionOfChain | undefined =
    continues || root === undefined || root.compacted_from_id === null
      ? undefined
      : { revisionId: root.id, sourceRevisionId: root.compacted_from_id, summarizedCount: root.summarized_count ?? 0, runId: root.run_id ?? "" };
  const messageIds = rows.flatMap((r) => r.message_ids);
  const bodies = await preparedQuery<{ id: string; body: JsonValue }>(db, "SELECT id, body FROM messages WHERE id = ANY($1::uuid[])", [messageIds]);
  const byId = new Map(bodies.rows.map((r) => [r.id, r.body]));
  const messages = messageIds.map((id) => {
    const body = byId.get(id);
    if (body === undefined) throw new Error(`revision ${revisionId} references missing message ${id}`);
    return fromStoredJson(body).message;
  });
  return { chain: rows.map((r) => r.id), messageIds, messages, compaction, ...(continues ? { continues: knownId } : {}) };
}
