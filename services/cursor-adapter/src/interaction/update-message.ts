/** Wraps one InteractionUpdate variant into the AgentServerMessage the stream carries. */
import { create } from "@bufbuild/protobuf";
import { agent } from "@byok/cursor-protocol";

export function interactionMessage(update: agent.InteractionUpdate["message"]): agent.AgentServerMessage {
  return create(agent.AgentServerMessageSchema, {
    message: { case: "interactionUpdate", value: create(agent.InteractionUpdateSchema, { message: update }) },
  });
}
