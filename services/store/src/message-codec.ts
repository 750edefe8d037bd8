/**
 * Canonical form of history messages. A message is stored as its protobuf JSON
 * (jsonb) and identified by the SHA-256 of the binary encoding of exactly what
 * was stored, so a message read back always has the digest it was stored with.
 *
 * Postgres text cannot hold U+0000: such characters are replaced by U+FFFD
 * before storing (the digest is of the replaced form, so a client that sends the
 * same history again is still recognised).
 */
import { createHash } from "node:crypto";
import { fromJson, toBinary, toJson, type JsonValue } from "@bufbuild/protobuf";
import { MessageSchema, type Message } from "@byok/contracts";

export interface CanonicalMessage {
  readonly message: Message;
  readonly json: JsonValue;
  readonly digest: Buffer;
  /** True when storing changed the message (a NUL character replaced): the stored one is not the one sent. */
  readonly rewritten?: boolean;
}

export function replaceNul(text: string): string {
  return text.includes("\u0000") ? text.replaceAll("\u0000", "\uFFFD") : text;
}

/** `value` with every NUL replaced; `found.nul` is set when one was. */
function replaceNulDeep(value: JsonValue, found: { nul: boolean }): JsonValue {
  if (typeof value === "string") {
    const replaced = replaceNul(value);
    if (replaced !== value) found.nul = true;
    return replaced;
  }
  if (Array.isArray(value)) return value.map((inner) => replaceNulDeep(inner, found));
  if (value !== null && typeof value === "object") {
    const out: { [key: string]: JsonValue } = {};
    for (const [key, inner] of Object.entries(value)) out[replaceNulDeep(key, found) as string] = replaceNulDeep(inner, found);
    return out;
  }
  return value;
}

export function canonicalMessage(message: Message): CanonicalMessage {
  const found = { nul: false };
  const canonical = fromStoredJson(replaceNulDeep(toJson(MessageSchema, message), found));
  return found.nul ? { ...canonical, rewritten: true } : canonical;
}

/** Decodes a stored body (jsonb) back into a message, without its digest (reads that do not need it). */
export function decodeStoredMessage(json: JsonValue): Message {
  return fromJson(MessageSchema, json);
}

/** Decodes a stored body (jsonb) back into a message with its digest. */
export function fromStoredJson(json: JsonValue): CanonicalMessage {
  const message = fromJson(MessageSchema, json);
  const digest = createHash("sha256").update(toBinary(MessageSchema, message)).digest();
  return { message, json, digest };
}

/** Digest of a history: folds every message digest, in order, into one chain digest. */
export function chainDigest(previous: Buffer | null, messageDigest: Buffer): Buffer {
  const hash = createHash("sha256");
  if (previous) hash.update(previous);
  return hash.update(messageDigest).digest();
}

/** Chain digests after each message: result[i] is the digest of messages[0..i]. */
export function prefixDigests(start: Buffer | null, messages: readonly CanonicalMessage[]): Buffer[] {
  const out: Buffer[] = [];
  let current = start;
  for (const m of messages) {
    current = chainDigest(current, m.digest);
    out.push(current);
  }
  return out;
}

/** Digest of a list of messages (order matters), for idempotency keys. */
export function listDigest(messages: readonly CanonicalMessage[]): string {
  const hash = createHash("sha256");
  for (const m of messages) hash.update(m.digest);
  return hash.digest("hex");
}
