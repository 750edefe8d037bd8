/**
 * One ACP session in this process: its record (session-directory.ts), the
 * editor connection it is attached to, the prompt turn running in it (at most
 * one), and the digest of the environment context its conversation last got.
 * Changes to the record are saved through `save` (best effort: the session
 * works on while the bucket is down, and the next change saves it again).
 */
import type { ConversationId, MemberId } from "@byok/contracts";
import type { Logger } from "@byok/platform";
import type { EditorClient } from "../acp/editor-client.ts";
import type { EditorConnection } from "../agent/editor-connection.ts";
import type { PromptTurn, TurnSession } from "../turn/prompt-turn.ts";
import type { SessionRecord } from "./session-directory.ts";

export class AcpSession implements TurnSession {
  readonly sessionId: ConversationId;
  readonly memberId: MemberId;
  #record: SessionRecord;
  #connection: EditorConnection;
  readonly #save: (record: SessionRecord) => Promise<void>;
  readonly #log: Logger;
  turn: PromptTurn | undefined;
  contextDigest: string | undefined;

  constructor(record: SessionRecord, connection: EditorConnection, save: (record: SessionRecord) => Promise<void>, log: Logger) {
    this.sessionId = record.sessionId as ConversationId;
    this.memberId = connection.memberId;
    this.#record = record;
    this.#connection = connection;
    this.#save = save;
    this.#log = log;
  }

  get record(): SessionRecord {
    return this.#record;
  }

  get cwd(): string {
    return this.#record.cwd;
  }

  get connection(): EditorConnection {
    return this.#connection;
  }

  get editor(): EditorClient {
    return this.#connection.editor;
  }

  attach(connection: EditorConnection): void {
    this.#connection = connection;
  }

  allowedAlways(): ReadonlySet<string> {
    return new Set(this.#record.allowAlways);
  }

  rememberAlways(key: string): void {
    if (this.#record.allowAlways.includes(key)) return;
    void this.update({ allowAlways: [...this.#record.allowAlways, key] });
  }

  /** Changes the record (updatedAt = now) and saves it; resolves once saved or logged as not saved. */
  async update(changes: Partial<Omit<SessionRecord, "v" | "sessionId" | "memberId" | "createdAt">>): Promise<void> {
    this.#record = { ...this.#record, ...changes, updatedAt: new Date().toISOString() };
    try {
      await this.#save(this.#record);
    } catch (error) {
      this.#log.warn({ err: error, conversation_id: this.sessionId }, "session record not saved");
    }
  }
}
