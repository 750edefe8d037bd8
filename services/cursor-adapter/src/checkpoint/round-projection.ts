/**
 * What the settled checkpoint of a tool round adds to the roots: the round's
 * messages exactly as the store committed them (one adjacent pair per result,
 * assistant call X then tool result X, in arrival order, the response's
 * text/reasoning on the first pair), so the roots stay the model's transcript
 * and the next turn's history import finds the stored revision again.
 *
 * The pairs arrive one by one (StateCommitted TOOL_RESULT). A pair this
 * session never heard of (it was committed by an owner that failed before
 * announcing it) is read back from the settled revision instead.
 */
import type { Message } from "@byok/contracts";

export class RoundLedger {
  /** round id -> committed messages, in commit order. */
  readonly #pairs = new Map<string, Message[]>();

  /** A TOOL_RESULT commit's appended messages. */
  record(roundId: string, appended: readonly Message[]): void {
    this.#pairs.set(roundId, [...(this.#pairs.get(roundId) ?? []), ...appended]);
  }

  /** The round's messages when every call's result was announced; undefined when some are missing. */
  messagesOf(roundId: string, callIds: readonly string[]): Message[] | undefined {
    const messages = this.#pairs.get(roundId) ?? [];
    const answered = new Set(messages.flatMap((m) => (m.body.case === "toolResult" ? [m.body.value.callId] : [])));
    return callIds.every((id) => answered.has(id)) ? messages : undefined;
  }
}

/**
 * The trailing messages of `history` that belong to the round of `callIds`:
 * tool results of those calls and assistant messages whose tool calls are all
 * among them, in stored order.
 */
export function roundMessagesFromHistory(history: readonly Message[], callIds: readonly string[]): Message[] {
  const ids = new Set(callIds);
  let start = history.length;
  while (start > 0 && belongsToRound(history[start - 1]!, ids)) start -= 1;
  return history.slice(start);
}

function belongsToRound(message: Message, ids: ReadonlySet<string>): boolean {
  const body = message.body;
  switch (body.case) {
    case "toolResult":
      return ids.has(body.value.callId);
    case "assistant": {
      const calls = body.value.content.flatMap((p) => (p.part.case === "toolCall" ? [p.part.value.callId] : []));
      return calls.length > 0 && calls.every((id) => ids.has(id));
    }
    case "user":
    case undefined:
      return false;
    default: {
      const unreachable: never = body;
      throw new Error(`unknown message body ${String(unreachable)}`);
    }
  }
}

/** Call ids of the tool results among `messages`, in order. */
export function resultOrder(messages: readonly Message[]): string[] {
  return messages.flatMap((m) => (m.body.case === "toolResult" ? [m.body.value.callId] : []));
}
