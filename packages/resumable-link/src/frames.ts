/**
 * The frames of a resumable link, one JSON object per text frame:
 *
 * | frame | fields | meaning |
 * |---|---|---|
 * | `{"t":"m","s":n,"d":"..."}` | s: 1, 2, ... per direction; d: the message text | message number s |
 * | `{"t":"a","s":n}` | s: highest message number received in order | every message up to s arrived (cumulative) |
 * | `{"t":"hello","link":"...","resumed":bool,"received":n}` | server -> client, first frame of every connection | the link the connection belongs to (new or resumed) and how many client messages the server holds |
 *
 * On a new connection the client says which link it resumes and how many
 * server messages it holds in the upgrade request (LINK_HEADERS); each side
 * then sends again, in order, every message the other side does not hold.
 */

export const LINK_HEADERS = {
  /** The link a reconnecting client resumes (absent on its first connection). */
  linkId: "byok-link-id",
  /** How many of the server's messages the client received in order. */
  received: "byok-link-received",
} as const;

export type LinkFrame =
  | { readonly t: "m"; readonly s: number; readonly d: string }
  | { readonly t: "a"; readonly s: number }
  | { readonly t: "hello"; readonly link: string; readonly resumed: boolean; readonly received: number };

export class LinkProtocolError extends Error {
  override readonly name = "LinkProtocolError";
}

export function encodeFrame(frame: LinkFrame): string {
  return JSON.stringify(frame);
}

function isCount(value: unknown): value is number {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0;
}

/** Parses one text frame; throws LinkProtocolError for anything that is not a link frame. */
export function decodeFrame(text: string): LinkFrame {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new LinkProtocolError("a link frame is not JSON");
  }
  if (typeof value !== "object" || value === null) throw new LinkProtocolError("a link frame is not an object");
  const f = value as Record<string, unknown>;
  switch (f["t"]) {
    case "m":
      if (!isCount(f["s"]) || f["s"] === 0 || typeof f["d"] !== "string") throw new LinkProtocolError("a message frame needs s >= 1 and d");
      return { t: "m", s: f["s"], d: f["d"] };
    case "a":
      if (!isCount(f["s"])) throw new LinkProtocolError("an ack frame needs s >= 0");
      return { t: "a", s: f["s"] };
    case "hello":
      if (typeof f["link"] !== "string" || f["link"] === "" || typeof f["resumed"] !== "boolean" || !isCount(f["received"])) {
        throw new LinkProtocolError("a hello frame needs link, resumed and received");
      }
      return { t: "hello", link: f["link"], resumed: f["resumed"], received: f["received"] };
    default:
      throw new LinkProtocolError(`unknown link frame ${JSON.stringify(f["t"])}`);
  }
}

/** The `received` count of a reconnect header; undefined when absent or malformed. */
export function parseReceivedHeader(value: string | undefined): number | undefined {
  if (value === undefined || !/^[0-9]{1,15}$/.test(value)) return undefined;
  return Number(value);
}
