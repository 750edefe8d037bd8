/**
 * Which blobs a checkpoint depends on: the root message blobs, the turn blobs,
 * the summary blobs of a compacted conversation,
 * and (when the client has them) what the turns point at — the UserMessage
 * blob, its pre-turn state snapshot and the step blobs.
 */
import { fromBinary } from "@bufbuild/protobuf";
import { agent } from "@byok/cursor-protocol";
import { blobKey, type BlobStore } from "./blob-store.ts";

export interface BlobReference {
  readonly id: Uint8Array;
  /** Where it was referenced, for messages: "roots[2]", "turns[0].steps[1]", ... */
  readonly path: string;
}

export function checkpointBlobReferences(state: agent.ConversationStateStructure, store: BlobStore): BlobReference[] {
  const refs: BlobReference[] = [];
  state.rootPromptMessagesJson.forEach((id, i) => refs.push({ id, path: `roots[${i}]` }));
  state.todos.forEach((id, i) => refs.push({ id, path: `todos[${i}]` }));
  if (state.summary !== undefined) refs.push({ id: state.summary, path: "summary" });
  if (state.summaryArchive !== undefined) refs.push({ id: state.summaryArchive, path: "summary_archive" });
  state.summaryArchives.forEach((id, i) => refs.push({ id, path: `summary_archives[${i}]` }));
  state.turns.forEach((id, i) => {
    refs.push({ id, path: `turns[${i}]` });
    const bytes = store.get(id);
    if (bytes === undefined) return;
    let turn: agent.ConversationTurnStructure;
    try {
      turn = fromBinary(agent.ConversationTurnStructureSchema, bytes);
    } catch {
      return;
    }
    if (turn.turn.case !== "agentConversationTurn") return;
    const t = turn.turn.value;
    if (t.userMessage.length > 0) {
      refs.push({ id: t.userMessage, path: `turns[${i}].user_message` });
      const userBytes = store.get(t.userMessage);
      if (userBytes !== undefined) {
        try {
          const user = fromBinary(agent.UserMessageSchema, userBytes);
          if (user.conversationStateBlobId.length > 0) refs.push({ id: user.conversationStateBlobId, path: `turns[${i}].user_message.conversation_state_blob_id` });
        } catch {
          // not a UserMessage: the reference check still covers the blob itself
        }
      }
    }
    t.steps.forEach((step, j) => refs.push({ id: step, path: `turns[${i}].steps[${j}]` }));
  });
  return refs;
}

export function describeBlob(id: Uint8Array): string {
  return blobKey(id).slice(0, 16);
}
