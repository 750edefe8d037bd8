/**
 * The client's checkpoint history: root blob ids -> canonical messages for
 * history.import. The first root, when it is a system message, is not history:
 * every run regenerates it from its PromptSpec.
 */
import { create } from "@bufbuild/protobuf";
import { createHash } from "node:crypto";
import { MessageSchema, UserOrigin, type Message } from "@byok/contracts";
import { importRootBytes, RootParseError, type RootImport } from "../root-codec/root-import.ts";
import { BLOB_ID_BYTES, blobKey } from "../checkpoint/blob-id.ts";

export interface ClientHistory {
  /** The client's roots to keep byte for byte (its system root left out). */
  historyRoots: Uint8Array[];
  /** Canonical history, oldest first. */
  messages: Message[];
  /** The first root of the whole list is a system root (left out). */
  leadingSystemRoot: boolean;
}

export class HistoryImportError extends Error {
  override readonly name = "HistoryImportError";
}

/** Root entries that are not 32-byte ids are inline JSON (older servers wrote roots that way). */
export function rootBlobIds(roots: readonly Uint8Array[]): Uint8Array[] {
  return roots.filter((root) => root.length === BLOB_ID_BYTES);
}

/**
 * Roots already parsed, by hex blob id: the roots fetched from the client are
 * parsed as each KV answer arrives (a few tens of microseconds each, between
 * the answers), so a long history fetched that way needs no reading pass of
 * its own afterwards. A root that does not parse keeps its error.
 */
export type ParsedRoots = Map<string, RootImport | RootParseError>;

/** Parses root bytes into `parsed` under `key` (once). */
export function parseRootInto(parsed: ParsedRoots, key: string, bytes: Uint8Array): void {
  if (parsed.has(key)) return;
  try {
    parsed.set(key, importRootBytes(bytes));
  } catch (error) {
    if (!(error instanceof RootParseError)) throw error;
    parsed.set(key, error);
  }
}

/**
 * `firstIndex`: the index of `roots[0]` in the whole list (> 0 when only the roots after a remembered prefix are read).
 * `parsed`: roots parsed before (the others are parsed here).
 */
export function readClientHistory(
  roots: readonly Uint8Array[],
  blobs: ReadonlyMap<string, Uint8Array>,
  onIgnored: (index: number, reason: string) => void,
  firstIndex = 0,
  parsed?: ReadonlyMap<string, RootImport | RootParseError>,
): ClientHistory {
  const historyRoots: Uint8Array[] = [];
  const messages: Message[] = [];
  let leadingSystemRoot = false;
  roots.forEach((root, offset) => {
    const index = firstIndex + offset;
    const key = root.length === BLOB_ID_BYTES ? blobKey(root) : undefined;
    let imported = key === undefined ? undefined : parsed?.get(key);
    if (imported === undefined) {
      const bytes = key === undefined ? root : blobs.get(key);
      if (bytes === undefined) throw new HistoryImportError(`root ${index} (${key}) could not be fetched`);
      try {
        imported = importRootBytes(bytes);
      } catch (error) {
        if (error instanceof RootParseError) throw new HistoryImportError(`root ${index}: ${error.message}`, { cause: error });
        throw error;
      }
    }
    if (imported instanceof RootParseError) throw new HistoryImportError(`root ${index}: ${imported.message}`, { cause: imported });
    switch (imported.kind) {
      case "system":
        if (index === 0) {
          leadingSystemRoot = true;
          return;
        }
        // A system message inside the history: keep it as injected context.
        historyRoots.push(root);
        messages.push(systemAsContext(imported.text));
        return;
      case "messages":
        historyRoots.push(root);
        messages.push(...imported.messages);
        return;
      case "ignored":
        historyRoots.push(root);
        onIgnored(index, imported.reason);
        return;
      default: {
        const unreachable: never = imported;
        throw new Error(`unknown root import ${String(unreachable)}`);
      }
    }
  });
  return { historyRoots, messages, leadingSystemRoot };
}

/** Whether `root` (an id whose bytes are in `blobs`, or inline JSON) is a system root; false when it cannot be read. */
export function isSystemRoot(root: Uint8Array, blobs: ReadonlyMap<string, Uint8Array>): boolean {
  const bytes = root.length === BLOB_ID_BYTES ? blobs.get(blobKey(root)) : root;
  if (bytes === undefined) return false;
  try {
    return importRootBytes(bytes).kind === "system";
  } catch (error) {
    if (error instanceof RootParseError) return false;
    throw error;
  }
}

function systemAsContext(text: string): Message {
  const digest = createHash("sha256").update(text).digest("hex");
  return create(MessageSchema, {
    body: {
      case: "user",
      value: { clientId: `system:${digest}`, origin: UserOrigin.CONTEXT, content: [{ part: { case: "text", value: { text } } }] },
    },
  });
}
