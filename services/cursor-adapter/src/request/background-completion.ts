/**
 * A run that tells the conversation that background work finished
 * (ConversationAction.background_task_completion_action): each completion
 * becomes one runtime message for the model, with a client id per sub-agent
 * (or shell task), marked "once" so the store never appends the same
 * completion to the conversation twice, however often the client retries.
 * The turn shows a simulated user message, as Cursor does for these runs.
 */
import { create } from "@bufbuild/protobuf";
import { MessageSchema, UserOrigin, type Message } from "@byok/contracts";
import { agent } from "@byok/cursor-protocol";
import { RUNTIME_ID_PREFIX } from "../root-codec/user-origin.ts";

export interface CompletionTurn {
  /** One runtime message per completion, in the client's order. */
  messages: Message[];
  /** Their client ids: the start is applied once per conversation. */
  onceClientIds: string[];
  /** The turn's (simulated) user message. */
  userMessage: agent.UserMessage;
}

/** Undefined when the action names no completion. */
export function completionTurn(action: agent.BackgroundTaskCompletionAction, mode: agent.AgentMode): CompletionTurn | undefined {
  const completions = action.completions.filter((c) => (c.subagentId ?? "") !== "" || c.taskId !== "");
  if (completions.length === 0) return undefined;
  const texts = completions.map(completionText);
  const messages = completions.map((completion, i) =>
    create(MessageSchema, {
      body: {
        case: "user",
        value: {
          clientId: completionClientId(completion),
          origin: UserOrigin.RUNTIME,
          content: [{ part: { case: "text", value: { text: texts[i] ?? "" } } }],
        },
      },
    }),
  );
  const userMessage = create(agent.UserMessageSchema, {
    text: texts.join("\n\n"),
    messageId: completionClientId(completions[0] as agent.BackgroundTaskCompletion),
    mode,
    isSimulatedMsg: true,
    simulatedMsgReason: agent.SimulatedMsgReason.BACKGROUND_TASK_COMPLETION,
  });
  return { messages, onceClientIds: messages.map((m) => (m.body.case === "user" ? m.body.value.clientId : "")), userMessage };
}

/** `runtime:background-subagent:<id>` or `runtime:background-shell:<task id>`. */
export function completionClientId(completion: agent.BackgroundTaskCompletion): string {
  const subagent = completion.subagentId ?? "";
  if (completion.kind === agent.BackgroundTaskKind.SHELL || subagent === "") return `${RUNTIME_ID_PREFIX}background-shell:${completion.taskId}`;
  return `${RUNTIME_ID_PREFIX}background-subagent:${subagent}`;
}

const STATUS: Record<number, string> = {
  [agent.BackgroundTaskStatus.SUCCESS]: "finished",
  [agent.BackgroundTaskStatus.ERROR]: "failed",
  [agent.BackgroundTaskStatus.ABORTED]: "was stopped",
};

function completionText(completion: agent.BackgroundTaskCompletion): string {
  const status = STATUS[completion.status] ?? "ended";
  const title = completion.title.trim() === "" ? "" : ` (${completion.title.trim()})`;
  const who =
    completion.kind === agent.BackgroundTaskKind.SHELL || (completion.subagentId ?? "") === ""
      ? `The background shell ${completion.taskId}${title}`
      : `The background sub-agent ${completion.subagentId ?? ""}${title}`;
  const lines = [`${who} ${status}.`];
  const detail = completion.detail?.trim() ?? "";
  if (detail !== "") lines.push("", detail);
  if ((completion.outputPath ?? "") !== "") lines.push("", `Full output: ${completion.outputPath ?? ""}`);
  if ((completion.toolCallId ?? "") !== "") lines.push(`(Started by tool call ${completion.toolCallId ?? ""}.)`);
  return `<background_task_completion>\n${lines.join("\n")}\n</background_task_completion>`;
}
