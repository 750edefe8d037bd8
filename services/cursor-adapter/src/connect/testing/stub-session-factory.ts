/**
 * Test-only RunSessionFactory that records what the transport hands it and
 * lets the test drive each run's ServerStream. A run_request is valid when it
 * names a model (requested_model.model_id).
 */
import { create } from "@bufbuild/protobuf";
import { agent } from "@byok/cursor-protocol";
import type { RunOpenContext, RunRequestCheck, RunSession, RunSessionFactory } from "../../transport/session-port.ts";

export interface StubRun {
  context: RunOpenContext;
  delivered: agent.AgentClientMessage[];
  disconnects: number;
}

export class StubSessionFactory implements RunSessionFactory {
  readonly runs = new Map<string, StubRun>();
  private readonly waiters = new Map<string, Array<(run: StubRun) => void>>();

  check(runRequest: agent.AgentRunRequest): RunRequestCheck {
    return runRequest.requestedModel?.modelId ? { kind: "ok" } : { kind: "invalid", message: "no model" };
  }

  open(context: RunOpenContext): RunSession {
    const run: StubRun = { context, delivered: [], disconnects: 0 };
    this.runs.set(context.requestId, run);
    for (const resolve of this.waiters.get(context.requestId) ?? []) resolve(run);
    this.waiters.delete(context.requestId);
    return {
      deliver: (message) => run.delivered.push(message),
      clientDisconnected: () => {
        run.disconnects += 1;
      },
    };
  }

  /** Resolves when the run of `requestId` has been opened. */
  opened(requestId: string): Promise<StubRun> {
    const run = this.runs.get(requestId);
    if (run) return Promise.resolve(run);
    return new Promise((resolve) => {
      const list = this.waiters.get(requestId) ?? [];
      list.push(resolve);
      this.waiters.set(requestId, list);
    });
  }
}

export function runRequestMessage(modelId: string): agent.AgentClientMessage {
  return create(agent.AgentClientMessageSchema, {
    message: {
      case: "runRequest",
      value: {
        conversationId: "conv-1",
        requestedModel: modelId === "" ? undefined : { modelId },
        conversationState: {},
        action: { action: { case: "userMessageAction", value: { userMessage: { text: "hello", messageId: "m1" } } } },
      },
    },
  });
}

/** A KV set result with a distinctive id, so tests can tell appends apart. */
export function kvAckMessage(id: number): agent.AgentClientMessage {
  return create(agent.AgentClientMessageSchema, {
    message: { case: "kvClientMessage", value: { id, message: { case: "setBlobResult", value: {} } } },
  });
}

export function clientHeartbeatMessage(): agent.AgentClientMessage {
  return create(agent.AgentClientMessageSchema, { message: { case: "clientHeartbeat", value: {} } });
}

export function textDeltaMessage(text: string): agent.AgentServerMessage {
  return create(agent.AgentServerMessageSchema, {
    message: { case: "interactionUpdate", value: { message: { case: "textDelta", value: { text } } } },
  });
}

export function kvIdOf(message: agent.AgentClientMessage): number | undefined {
  return message.message.case === "kvClientMessage" ? message.message.value.id : undefined;
}
