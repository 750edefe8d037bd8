/**
 * session/prompt -> PreparedRun: the session's conversation in the store is
 * the history (its head is the run's base revision; ACP clients keep no
 * history of their own), the session's model and mode pick the ModelSpec and
 * the frozen PromptSpec (tools the editor can serve only), and the run starts
 * with the environment context (when it changed) and the user's message.
 */
import { create } from "@bufbuild/protobuf";
import { ModelSpecSchema, PreparedRunSchema, RunClientKind, type ConversationId, type MemberId, type Message, type PreparedRun, type RunId } from "@byok/contracts";
import type { Logger, ModelConfig } from "@byok/platform";
import { StoreFailure, type StoreClient } from "@byok/store-client";
import type { ClientCapabilities, ContentBlock } from "../acp/acp-types.ts";
import { AcpError } from "../acp/failures.ts";
import type { PromptAssets } from "../prompting/prompt-assets.ts";
import { buildPromptSpec } from "../prompting/prompt-spec.ts";
import type { AcpMode } from "../sessions/session-modes.ts";
import type { AcpToolName } from "../tools/tool-names.ts";
import { contextDigest, contextMessage, lastContextDigest, type SessionEnvironment } from "./context-message.ts";
import { promptMessage } from "./prompt-message.ts";

export interface PrepareTurnInput {
  readonly runId: RunId;
  readonly conversationId: ConversationId;
  readonly memberId: MemberId;
  readonly prompt: readonly ContentBlock[];
  readonly mode: AcpMode;
  readonly model: ModelConfig;
  readonly environment: SessionEnvironment;
  readonly capabilities: ClientCapabilities;
  /** The digest of the context the conversation last got, when this process knows it. */
  readonly knownContextDigest: string | undefined;
  readonly prompts: PromptAssets;
  readonly store: Pick<StoreClient, "call" | "revisionMessages">;
  readonly log: Logger;
}

export interface PreparedTurn {
  readonly run: PreparedRun;
  readonly toolNames: readonly AcpToolName[];
  /** The context digest the conversation has once the run begins. */
  readonly contextDigest: string;
}

export async function prepareTurn(input: PrepareTurnInput): Promise<PreparedTurn> {
  const { conversationId, memberId, model } = input;
  const head = await conversationHead(input.store, conversationId, memberId);
  const digest = contextDigest(input.environment);
  const known = input.knownContextDigest ?? (head === "" ? "" : lastContextDigest(await input.store.revisionMessages(head)));
  const initialMessages: Message[] = [];
  if (digest !== known) initialMessages.push(contextMessage(input.environment));
  initialMessages.push(promptMessage(input.runId, input.prompt));

  const built = buildPromptSpec(input.prompts, input.mode, model.displayName, input.capabilities);
  const run = create(PreparedRunSchema, {
    runId: input.runId,
    conversationId,
    memberId,
    model: create(ModelSpecSchema, {
      modelId: model.id,
      contextWindow: model.contextWindow,
      ...(model.maxOutputTokens === undefined ? {} : { maxOutputTokens: model.maxOutputTokens }),
    }),
    prompt: built.spec,
    action: { case: "start", value: { initialMessages } },
    baseRevisionId: head,
    clientKind: RunClientKind.ACP,
  });
  return { run, toolNames: built.toolNames, contextDigest: digest };
}

/** The conversation's head revision ("" for a conversation the store has not seen yet). */
export async function conversationHead(store: Pick<StoreClient, "call">, conversationId: ConversationId, memberId: MemberId): Promise<string> {
  try {
    const conversation = await store.call("getConversation", { conversationId });
    if (conversation.memberId !== "" && conversation.memberId !== memberId) throw new AcpError({ kind: "session_not_found", sessionId: conversationId });
    return conversation.headRevisionId;
  } catch (error) {
    if (error instanceof StoreFailure && error.kind === "not_found") return "";
    throw error;
  }
}
