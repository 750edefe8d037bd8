/**
 * The UI-facing history of the run's turn (cursor-agent-protocol §4.4): a
 * ConversationTurnStructure blob pointing at the UserMessage blob and one blob
 * per step (thinking, assistant text, completed tool call). Blobs are immutable, so every time steps
 * are added a new turn blob replaces the previous one in the checkpoint.
 */
import { create, toBinary } from "@bufbuild/protobuf";
import { agent, type tools } from "@byok/cursor-protocol";
import type { AssistantMessage } from "@byok/contracts";

/** Serialized steps for the reasoning and text parts of an assistant message. */
export function stepBlobsOf(assistant: AssistantMessage, thinkingDurationsMs: readonly number[]): Uint8Array[] {
  const steps: Uint8Array[] = [];
  let thinkingIndex = 0;
  for (const part of assistant.content) {
    const p = part.part;
    if (p.case === "reasoning") {
      const durationMs = thinkingDurationsMs[thinkingIndex++] ?? 0;
      steps.push(stepBytes({ case: "thinkingMessage", value: create(agent.ThinkingMessageSchema, { text: p.value.text, durationMs }) }));
    } else if (p.case === "text") {
      steps.push(stepBytes({ case: "assistantMessage", value: create(agent.AssistantMessageSchema, { text: p.value.text }) }));
    }
    // Tool-call steps carry the completed typed ToolCall; they come with the settled round.
  }
  return steps;
}

/** The step of one completed tool call (the same typed card as tool_call_completed). */
export function toolCallStepBlob(toolCall: tools.ToolCall): Uint8Array {
  return stepBytes({ case: "toolCall", value: toolCall });
}

function stepBytes(message: agent.ConversationStep["message"]): Uint8Array {
  return toBinary(agent.ConversationStepSchema, create(agent.ConversationStepSchema, { message }));
}

export function userMessageBlob(message: agent.UserMessage): Uint8Array {
  return toBinary(agent.UserMessageSchema, message);
}

export function turnBlob(userMessageId: Uint8Array, stepIds: readonly Uint8Array[], requestId: string): Uint8Array {
  const turn = create(agent.ConversationTurnStructureSchema, {
    turn: {
      case: "agentConversationTurn",
      value: create(agent.AgentConversationTurnStructureSchema, { userMessage: userMessageId, steps: [...stepIds], requestId }),
    },
  });
  return toBinary(agent.ConversationTurnStructureSchema, turn);
}
