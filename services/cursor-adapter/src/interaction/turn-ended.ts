/** interaction_update.turn_ended from the run's provider usage: a field is set only when reported. */
import { create } from "@bufbuild/protobuf";
import type { Usage } from "@byok/contracts";
import { agent } from "@byok/cursor-protocol";
import { interactionMessage } from "./update-message.ts";

export function turnEndedMessage(usage: Usage | undefined): agent.AgentServerMessage {
  const turnEnded = create(agent.TurnEndedUpdateSchema, {
    ...(usage?.inputTokens === undefined ? {} : { inputTokens: usage.inputTokens }),
    ...(usage?.outputTokens === undefined ? {} : { outputTokens: usage.outputTokens }),
    ...(usage?.cacheReadTokens === undefined ? {} : { cacheReadTokens: usage.cacheReadTokens }),
    ...(usage?.cacheWriteTokens === undefined ? {} : { cacheWriteTokens: usage.cacheWriteTokens }),
    ...(usage?.reasoningTokens === undefined ? {} : { reasoningTokens: usage.reasoningTokens }),
  });
  return interactionMessage({ case: "turnEnded", value: turnEnded });
}
