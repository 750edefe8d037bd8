/**
 * Numeric wire ids <-> tool call ids for one Cursor request.
 *
 * The server assigns the uint32 ids (from 1, increasing across every tool round
 * of the request); the client correlates its replies by id only. Anything that
 * does not fit the lifecycle (id 0 / absent, an id we never sent, a second
 * terminal result, a second close) comes back as a protocol error value so
 * the session can fail the run instead of handing it to the loop.
 *
 * Use one registry per message family: exec ids and interaction query ids
 * are separate sequences.
 */

type EntryState = "running" | "resulted" | "closed" | "aborted";

interface Entry {
  callId: string;
  state: EntryState;
}

export type ExecIdLookup =
  /** The id is in flight: hand the message to the call's exec. */
  | { kind: "active"; callId: string }
  /** The id was aborted (cancel/failure): ignore the message. */
  | { kind: "late"; callId: string }
  | { kind: "protocol_error"; message: string };

export type ExecCloseLookup =
  /** Trailing close after the terminal result: nothing to do. */
  | { kind: "closed"; callId: string }
  /** Close while still running: the exec ended without a result (a tool error for the model). */
  | { kind: "closed_without_result"; callId: string }
  | { kind: "late"; callId: string }
  | { kind: "protocol_error"; message: string };

const MAX_WIRE_ID = 0xffff_ffff;

export class ExecIdRegistry {
  readonly #label: string;
  readonly #entries = new Map<number, Entry>();
  #lastId = 0;

  /** `label` names the family in error messages ("exec", "interaction query"). */
  constructor(label = "exec") {
    this.#label = label;
  }

  /** A fresh id for a request of `callId`. */
  allocate(callId: string): number {
    if (this.#lastId >= MAX_WIRE_ID) throw new Error(`${this.#label} id space exhausted`);
    this.#lastId += 1;
    this.#entries.set(this.#lastId, { callId, state: "running" });
    return this.#lastId;
  }

  /** A result, stream event, throw or heartbeat for `id`. Does not change state. */
  lookup(id: number | undefined): ExecIdLookup {
    const found = this.#find(id);
    if (found.kind === "protocol_error") return found;
    const { entry } = found;
    switch (entry.state) {
      case "running":
        return { kind: "active", callId: entry.callId };
      case "aborted":
        return { kind: "late", callId: entry.callId };
      case "resulted":
      case "closed":
        return { kind: "protocol_error", message: `${this.#label} ${id} answered again after its terminal result` };
      default: {
        const unreachable: never = entry.state;
        throw new Error(`unknown state ${String(unreachable)}`);
      }
    }
  }

  /** The call's exec produced its terminal outcome for this id (done or next step). */
  settle(id: number): void {
    const entry = this.#entries.get(id);
    if (entry !== undefined && entry.state === "running") entry.state = "resulted";
  }

  /** exec_client_control_message.stream_close for `id`. */
  close(id: number | undefined): ExecCloseLookup {
    const found = this.#find(id);
    if (found.kind === "protocol_error") return found;
    const { entry } = found;
    switch (entry.state) {
      case "resulted":
        entry.state = "closed";
        return { kind: "closed", callId: entry.callId };
      case "running":
        entry.state = "closed";
        return { kind: "closed_without_result", callId: entry.callId };
      case "aborted":
        return { kind: "late", callId: entry.callId };
      case "closed":
        return { kind: "protocol_error", message: `${this.#label} ${id} closed twice` };
      default: {
        const unreachable: never = entry.state;
        throw new Error(`unknown state ${String(unreachable)}`);
      }
    }
  }

  /** Ids still waiting for a terminal result, ascending. */
  running(): number[] {
    return [...this.#entries].filter(([, e]) => e.state === "running").map(([id]) => id);
  }

  /** Marks every running id aborted (later messages for them are ignored) and returns them, ascending. */
  abortRunning(): number[] {
    const ids = this.running();
    for (const id of ids) {
      const entry = this.#entries.get(id);
      if (entry !== undefined) entry.state = "aborted";
    }
    return ids;
  }

  #find(id: number | undefined): { kind: "found"; entry: Entry } | { kind: "protocol_error"; message: string } {
    if (id === undefined || id === 0) return { kind: "protocol_error", message: `${this.#label} message without an id` };
    const entry = this.#entries.get(id);
    if (entry === undefined) return { kind: "protocol_error", message: `unknown ${this.#label} id ${id}` };
    return { kind: "found", entry };
  }
}
