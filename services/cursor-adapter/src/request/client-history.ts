/**
 * The client's checkpoint history: root blob ids -> canonical messages for
 * history.import. The first root, when it is a system message, is not history:
 * every run regenerates it from its PromptSpec.
 */
import { create } from "@bufbuild/protobuf";
import { createHash } from "node:crypto";
import { MessageSchema, UserOrigin, type Message } from "@byok/contracts";
import { importRootBytes, RootParseError } from "../root-codec/root-import.ts";
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

/** `firstIndex`: the index of `roots[0]` in the whole list (> 0 when only the roots after a remembered prefix are read). */
export function readClientHistory(
  roots: readonly Uint8Array[],
  blobs: ReadonlyMap<string, Uint8Array>,
  onIgnored: (index: number, reason: string) => void,
  firstIndex = 0,
): ClientHistory {
  const historyRoots: Uint8Array[] = [];
  const messages: Message[] = [];
  let leadingSystemRoot = false;
  roots.forEach((root, offset) => {
    const index = firstIndex + offset;
    const bytes = root.length === BLOB_ID_BYTES ? blobs.get(blobKey(root)) : root;
    if (bytes === undefined) throw new HistoryImportError(`root ${index} (${blobKey(root)}) could not be fetched`);
    let imported;
    try {
      imported = importRootBytes(bytes);
    } catch (error) {
      if (error instanceof RootParseError) throw new HistoryImportError(`root ${index}: ${error.message}`, { cause: error });
      throw error;
    }
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
