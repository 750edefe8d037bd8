/**
 * Everything one fake run saw and did, in order. Each entry carries `order`
 * (a per-run counter, so two events in the same millisecond still compare) and
 * `at` (performance.now()). Tests check ordering rules on it, e.g. "every blob a
 * checkpoint references was ACKed before the checkpoint arrived".
 */
import { agent } from "@byok/cursor-protocol";
import type { EndStreamOutcome } from "./envelope.ts";

export type TimelineEntry =
  | { kind: "frame"; order: number; at: number; message: agent.AgentServerMessage; label: string }
  | { kind: "end"; order: number; at: number; outcome: EndStreamOutcome; label: string }
  | { kind: "append"; order: number; at: number; seqno: number; label: string; status?: number }
  | { kind: "transport"; order: number; at: number; label: string; error: string };

export type CheckpointKind = "staged" | "settled";

export function checkpointKind(state: agent.ConversationStateStructure): CheckpointKind {
  return state.pendingToolCalls.length > 0 ? "staged" : "settled";
}

/** A text delta frame (e.g. to wait for the first text of a run). */
export function isTextDelta(message: agent.AgentServerMessage): boolean {
  return message.message.case === "interactionUpdate" && message.message.value.message.case === "textDelta";
}

/** A short readable name for a server frame: "text_delta", "kv_set#3", "checkpoint:staged", ... */
export function frameLabel(message: agent.AgentServerMessage): string {
  const m = message.message;
  switch (m.case) {
    case "interactionUpdate":
      return snake(m.value.message.case ?? "interaction_update:empty");
    case "kvServerMessage": {
      const op = m.value.message.case === "setBlobArgs" ? "kv_set" : m.value.message.case === "getBlobArgs" ? "kv_get" : "kv_empty";
      return `${op}#${m.value.id}`;
    }
    case "conversationCheckpointUpdate":
      return `checkpoint:${checkpointKind(m.value)}`;
    case "execServerMessage":
      return `exec#${m.value.id}`;
    case "execServerControlMessage":
      return m.value.message.case === "abort" ? `exec_abort#${m.value.message.value.id}` : "exec_control";
    case "interactionQuery":
      return `query#${m.value.id}`;
    case undefined:
      return "empty_server_message";
    default: {
      const never: never = m;
      return `unknown:${JSON.stringify(never)}`;
    }
  }
}

export function endLabel(outcome: EndStreamOutcome): string {
  return outcome.kind === "ok" ? "end:ok" : `end:${outcome.code}`;
}

/** Labels of the frames worth reading in a failure message (heartbeats and deltas collapsed). */
export function describeTimeline(entries: readonly TimelineEntry[]): string {
  const labels: string[] = [];
  for (const e of entries) {
    if (e.kind === "append") continue;
    const label = e.label;
    const last = labels[labels.length - 1];
    if (last !== undefined && (last === label || last.startsWith(`${label} x`))) {
      const count = last === label ? 2 : Number(last.slice(label.length + 2)) + 1;
      labels[labels.length - 1] = `${label} x${count}`;
    } else labels.push(label);
  }
  return labels.join(" -> ");
}

function snake(name: string): string {
  return name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}
