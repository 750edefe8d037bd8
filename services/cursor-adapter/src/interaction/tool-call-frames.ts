/**
 * Tool calls while the model is still generating them (ClientEvent
 * tool_call_start / args_delta / end) -> the IDE's tool card placeholders:
 * partial_tool_call with the empty typed card as soon as the name is known,
 * then the argument text as it streams (args_text_delta). Write/StrReplace
 * stream the file content instead (tool_call_delta.edit_tool_call_delta) and
 * get their path on the card once it is complete (cursor-agent-protocol §6, §8.5).
 *
 * Nothing executes here: execution starts with ExecuteToolRound, after the
 * model cycle completed and the round is durable.
 */
import type { ClientModelCallIndex, ToolCallArgsDelta, ToolCallEnd, ToolCallStart } from "@byok/contracts";
import type { agent, tools } from "@byok/cursor-protocol";
import { partialCard, partialToolCallUpdate, toolCallDeltaUpdate } from "../tools/cards.ts";
import { ArgsFieldStreamer, editContentDelta, editPathCard, editStreamFields, type EditStreamFields } from "../tools/edit-stream.ts";

export interface ToolCallFramesOptions {
  send(update: agent.InteractionUpdate["message"]): void;
  /** True for the run's dynamic MCP tools (their card is an MCP card). */
  isDynamicTool(name: string): boolean;
  /** The model_call_id the cards of model call `index` carry. */
  modelCallIdOf(modelCallIndex: ClientModelCallIndex): string;
}

interface StreamingCall {
  callId: string;
  modelCallId: string;
  /** The card every args update carries (the edit card gains its path). */
  card: tools.ToolCall;
  /** Edit tools: decodes path + content from the streaming argument JSON. */
  edit: { streamer: ArgsFieldStreamer; fields: EditStreamFields } | undefined;
}

export class ToolCallFrames {
  readonly #options: ToolCallFramesOptions;
  /** Calls of the current model call by block index. */
  readonly #streaming = new Map<number, StreamingCall>();
  /** call id -> model_call_id, for the started/completed updates of the tool round. */
  readonly #modelCallIds = new Map<string, string>();

  constructor(options: ToolCallFramesOptions) {
    this.#options = options;
  }

  start(modelCallIndex: ClientModelCallIndex, start: ToolCallStart): void {
    const modelCallId = this.#options.modelCallIdOf(modelCallIndex);
    const card = partialCard(start.callId, start.name, this.#options.isDynamicTool(start.name));
    const fields = editStreamFields(start.name);
    this.#streaming.set(start.index, {
      callId: start.callId,
      modelCallId,
      card,
      edit: fields === undefined ? undefined : { streamer: new ArgsFieldStreamer([fields.path, fields.content]), fields },
    });
    this.#modelCallIds.set(start.callId, modelCallId);
    this.#options.send(partialToolCallUpdate(start.callId, card, modelCallId));
  }

  delta(delta: ToolCallArgsDelta): void {
    const call = this.#streaming.get(delta.index);
    if (call === undefined || delta.delta === "") return;
    if (call.edit === undefined) {
      this.#options.send(partialToolCallUpdate(call.callId, call.card, call.modelCallId, delta.delta));
      return;
    }
    for (const field of call.edit.streamer.push(delta.delta)) {
      if (field.kind === "text" && field.field === call.edit.fields.content) {
        this.#options.send(toolCallDeltaUpdate(call.callId, editContentDelta(field.text), call.modelCallId));
      } else if (field.kind === "complete" && field.field === call.edit.fields.path) {
        call.card = editPathCard(call.callId, field.value);
        this.#options.send(partialToolCallUpdate(call.callId, call.card, call.modelCallId));
      }
    }
  }

  end(end: ToolCallEnd): void {
    this.#streaming.delete(end.index);
  }

  /** Forget half-streamed calls (sequence gap, next model call); their cards complete with the round. */
  reset(): void {
    this.#streaming.clear();
  }

  /** model_call_id of a call seen streaming ("" for calls this session never saw, e.g. a resumed round). */
  modelCallIdOf(callId: string): string {
    return this.#modelCallIds.get(callId) ?? "";
  }
}
