/**
 * The run owner's ClientEvents -> ACP session updates, as they stream: text
 * deltas become agent_message_chunk, thinking deltas agent_thought_chunk, a
 * tool call the model starts a `tool_call` (pending) and its complete
 * arguments a `tool_call_update` (title, locations, rawInput). ACP has no open
 * blocks to close, so a sequence gap (ClientEventOrder) only means some text
 * may be missing from the stream; the stored answer is complete. Tool calls
 * are announced once per call id (a new owner repeats nothing here, but an
 * ExecuteToolRound for calls never seen streaming announces them too).
 * compaction_started (the owner summarizes the history) has no ACP update.
 */
import type { ClientEvent } from "@byok/contracts";
import type { Logger } from "@byok/platform";
import { ClientEventOrder } from "@byok/run-client";
import type { SessionUpdate } from "../acp/acp-types.ts";
import { announcedCall, describeCall } from "../tools/tool-view.ts";

export class EventUpdates {
  readonly #send: (update: SessionUpdate) => void;
  readonly #log: Logger;
  readonly #order = new ClientEventOrder();
  /** Tool calls of the current model call by block index: call id and name. */
  readonly #streaming = new Map<number, { callId: string; name: string }>();
  readonly #announced = new Set<string>();

  constructor(send: (update: SessionUpdate) => void, log: Logger) {
    this.#send = send;
    this.#log = log;
  }

  accept(event: ClientEvent): void {
    const place = this.#order.accept(event);
    if (place.gap) this.#log.debug({ seq: String(event.seq) }, "client event gap");
    if (place.gap || place.newModelCall) this.#streaming.clear();
    const e = event.event;
    switch (e.case) {
      case "textDelta":
        if (e.value.text !== "") this.#send({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: e.value.text } });
        return;
      case "thinkingDelta":
        if (e.value.text !== "") this.#send({ sessionUpdate: "agent_thought_chunk", content: { type: "text", text: e.value.text } });
        return;
      case "toolCallStart":
        this.#streaming.set(e.value.index, { callId: e.value.callId, name: e.value.name });
        this.announce(e.value.callId, e.value.name);
        return;
      case "toolCallEnd": {
        const call = this.#streaming.get(e.value.index);
        this.#streaming.delete(e.value.index);
        if (call === undefined) return;
        const described = describeCall(call.name, e.value.argumentsJson);
        this.#send({ sessionUpdate: "tool_call_update", toolCallId: call.callId, title: described.title, locations: described.locations, rawInput: described.rawInput });
        return;
      }
      case "textStart":
      case "textEnd":
      case "thinkingStart":
      case "thinkingEnd":
      case "toolCallArgsDelta":
      case "usage":
      case "compactionStarted":
      case "responseComplete":
      case undefined:
        return;
      default: {
        const unreachable: never = e;
        throw new Error(`unknown client event ${String(unreachable)}`);
      }
    }
  }

  /** A `tool_call` for `callId` unless one was sent already. */
  announce(callId: string, name: string): void {
    if (this.#announced.has(callId)) return;
    this.#announced.add(callId);
    this.#send({ sessionUpdate: "tool_call", ...announcedCall(callId, name) });
  }
}
