/**
 * What an ACP session is beyond its conversation's stored history: the
 * working directory, title, mode, model and the permissions the member chose
 * "always" for, plus when it was created and last used. session/list reads
 * it, session/load and a prompt for a session this process does not hold find
 * the session again through it.
 *
 * It lives in a JetStream key-value bucket of the adapter's own
 * (`<PREFIX>_SESSIONS_ACP`, one key `<member>.<session>` per session), not in
 * the store: it is the adapter's protocol state, the store keeps what every
 * client shares (messages, revisions, runs), and the conversation history
 * stays complete without it. Losing the bucket loses the session list and
 * settings, never a message.
 */
import { Kvm, type KV } from "@nats-io/kv";
import { z } from "zod";
import type { BusNames, MemberId } from "@byok/contracts";
import type { NatsConnection } from "@byok/platform";
import { ACP_MODES } from "./session-modes.ts";

const recordSchema = z.object({
  v: z.literal(1),
  sessionId: z.string().min(1),
  memberId: z.string().min(1),
  cwd: z.string().min(1),
  additionalDirectories: z.array(z.string()),
  title: z.string().optional(),
  mode: z.enum(ACP_MODES),
  modelId: z.string().min(1),
  /** Permission keys the member allowed "always" in this session (tools/permissions.ts). */
  allowAlways: z.array(z.string()),
  createdAt: z.string(),
  updatedAt: z.string(),
});

export type SessionRecord = z.infer<typeof recordSchema>;

/** Session ids this adapter hands out (mintConversationId) and accepts back. */
const SESSION_ID = /^[A-Za-z0-9_-]{1,128}$/;

export function isSessionId(value: string): boolean {
  return SESSION_ID.test(value);
}

export class SessionDirectoryError extends Error {
  override readonly name = "SessionDirectoryError";
}

export interface SessionDirectory {
  /** The member's session, or undefined (unknown, another member's, or an id this adapter never made). */
  get(memberId: MemberId, sessionId: string): Promise<SessionRecord | undefined>;
  put(record: SessionRecord): Promise<void>;
  /** Every session of the member (in no particular order). */
  list(memberId: MemberId): Promise<SessionRecord[]>;
}

/** Opens (creating when missing) the adapter's bucket on NATS. */
export async function openSessionDirectory(nc: NatsConnection, names: BusNames): Promise<SessionDirectory> {
  let kv: KV;
  try {
    kv = await new Kvm(nc).create(names.clientSessionsBucket("acp"), { history: 1 });
  } catch (cause) {
    throw new SessionDirectoryError(`cannot open the ACP session bucket: ${(cause as Error).message}`, { cause });
  }
  return new KvSessionDirectory(kv);
}

/** Key tokens: the member id base64url-encoded (any string is a valid member id), the session id as is. */
function keyOf(memberId: string, sessionId: string): string {
  return `${Buffer.from(memberId, "utf8").toString("base64url")}.${sessionId}`;
}

class KvSessionDirectory implements SessionDirectory {
  readonly #kv: KV;

  constructor(kv: KV) {
    this.#kv = kv;
  }

  async get(memberId: MemberId, sessionId: string): Promise<SessionRecord | undefined> {
    if (!isSessionId(sessionId)) return undefined;
    const entry = await this.#call("read a session", () => this.#kv.get(keyOf(memberId, sessionId)));
    if (entry === null || entry.operation !== "PUT") return undefined;
    const parsed = recordSchema.safeParse(entry.json());
    if (!parsed.success || parsed.data.memberId !== memberId) return undefined;
    return parsed.data;
  }

  async put(record: SessionRecord): Promise<void> {
    if (!isSessionId(record.sessionId)) throw new SessionDirectoryError(`session id ${JSON.stringify(record.sessionId)} cannot be stored`);
    await this.#call("save a session", () => this.#kv.put(keyOf(record.memberId, record.sessionId), JSON.stringify(record)));
  }

  async list(memberId: MemberId): Promise<SessionRecord[]> {
    const prefix = Buffer.from(memberId, "utf8").toString("base64url");
    const keys: string[] = [];
    await this.#call("list sessions", async () => {
      for await (const key of await this.#kv.keys(`${prefix}.*`)) keys.push(key);
    });
    const records = await Promise.all(keys.map((key) => this.get(memberId, key.slice(prefix.length + 1))));
    return records.filter((r): r is SessionRecord => r !== undefined);
  }

  async #call<T>(what: string, work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (cause) {
      throw new SessionDirectoryError(`cannot ${what}: ${(cause as Error).message}`, { cause });
    }
  }
}
