/**
 * The checkpoint's `todos`: one blob per TodoItem protobuf (cursor-agent-protocol
 * §4.1). Decoding the client's list lets TodoWrite merge into it; encoding gives
 * the blobs a new checkpoint references.
 */
import { fromBinary, toBinary } from "@bufbuild/protobuf";
import { tools } from "@byok/cursor-protocol";
import { blobKey } from "./blob-id.ts";

export class TodoBlobError extends Error {
  override readonly name = "TodoBlobError";
}

/** The client's todo list, in checkpoint order. */
export function decodeTodos(ids: readonly Uint8Array[], blobs: ReadonlyMap<string, Uint8Array>): tools.TodoItem[] {
  return ids.map((id, index) => {
    const bytes = blobs.get(blobKey(id));
    if (bytes === undefined) throw new TodoBlobError(`todo ${index} (${blobKey(id)}) could not be fetched`);
    try {
      return fromBinary(tools.TodoItemSchema, bytes);
    } catch (cause) {
      throw new TodoBlobError(`todo ${index} (${blobKey(id)}) is not a TodoItem`, { cause });
    }
  });
}

export function todoBlob(item: tools.TodoItem): Uint8Array {
  return toBinary(tools.TodoItemSchema, item);
}
