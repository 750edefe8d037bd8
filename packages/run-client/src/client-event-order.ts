/**
 * The order of a run's ClientEvents (the owner's ephemeral UI stream on
 * <prefix>.runs.<run_id>.evt). Events carry `seq` from 1; any jump (forwards:
 * lost events; backwards: another worker took the run over and counts from 1
 * again) is a gap, after which the client closes whatever UI block it has open
 * (half-streamed text, thinking, tool arguments), because its end may never
 * come. A change of `model_call_index` starts the UI of the next model call.
 */
import { parseClientModelCallIndex, type ClientEvent, type ClientModelCallIndex } from "@byok/contracts";

export interface ClientEventPlace {
  /** The event does not follow the previous one: open UI blocks must be closed first. */
  readonly gap: boolean;
  /** The event belongs to another model call than the previous one (true for the first event). */
  readonly newModelCall: boolean;
  readonly modelCallIndex: ClientModelCallIndex;
}

export class ClientEventOrder {
  #lastSeq = 0n;
  #modelCallIndex: ClientModelCallIndex | undefined;

  /** Where `event` stands relative to the events before it; call once per event, in arrival order. */
  accept(event: ClientEvent): ClientEventPlace {
    const gap = event.seq !== this.#lastSeq + 1n;
    this.#lastSeq = event.seq;
    const modelCallIndex = parseClientModelCallIndex(event.modelCallIndex);
    const newModelCall = this.#modelCallIndex !== modelCallIndex;
    this.#modelCallIndex = modelCallIndex;
    return { gap, newModelCall, modelCallIndex };
  }
}
