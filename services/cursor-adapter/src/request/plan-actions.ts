/**
 * The plan actions of a run_request as ordinary turns: start_plan_action is a
 * user message in plan mode; execute_plan_action (Cursor's "Build" on a plan)
 * is a simulated user message in the execution mode (agent unless the client
 * says otherwise) that hands the model the plan to carry out.
 */
import { create } from "@bufbuild/protobuf";
import { agent } from "@byok/cursor-protocol";

export interface PlanTurn {
  userMessage: agent.UserMessage;
  requestContext: agent.RequestContext | undefined;
}

export function startPlanTurn(action: agent.StartPlanAction): PlanTurn | undefined {
  if (action.userMessage === undefined) return undefined;
  const userMessage = create(agent.UserMessageSchema, action.userMessage);
  if (userMessage.mode === agent.AgentMode.UNSPECIFIED) userMessage.mode = agent.AgentMode.PLAN;
  return { userMessage, requestContext: action.requestContext };
}

/** Undefined when the action carries no plan text. */
export function executePlanTurn(action: agent.ExecutePlanAction, fallbackMessageId: string): PlanTurn | undefined {
  const plan = (action.plan?.plan ?? "").trim() || (action.planFileContent ?? "").trim();
  if (plan === "") return undefined;
  const where = action.planFilePath ?? action.planFileUri ?? "";
  const text = `Carry out this plan${where === "" ? "" : ` (${where})`}, step by step, keeping its todo list up to date:\n\n${plan}`;
  const userMessage = create(agent.UserMessageSchema, {
    text,
    messageId: (action.kickoffMessageId ?? "") || fallbackMessageId,
    mode: action.executionMode === agent.AgentMode.UNSPECIFIED ? agent.AgentMode.AGENT : action.executionMode,
    isSimulatedMsg: true,
    simulatedMsgReason: agent.SimulatedMsgReason.PLAN_EXECUTION,
  });
  return { userMessage, requestContext: action.requestContext };
}
