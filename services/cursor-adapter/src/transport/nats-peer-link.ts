/**
 * PeerLink on core NATS (subjects from busNames, messages from peers.proto):
 *
 * - the owner subscribes to `adapterRun(request id)` in the queue group
 *   `run-owner` (a forwarded append reaches one instance even if two ever
 *   claimed the id), then publishes an empty `adapterRunOwner(request id)` for
 *   instances that hold early appends (no flush between: NATS handles one
 *   connection's protocol in order, so the subscription is in place before
 *   anyone hears the announcement);
 * - a forwarder sends each append as a request there and waits for the owner's
 *   answer (what its append sequencer did: accepted, duplicate, rejected);
 * - no responders means no instance owns the id yet.
 *
 * Nothing is kept on the server: a subscription disappears with its owner.
 */
import { fromBinary, toBinary, create, type MessageInitShape } from "@bufbuild/protobuf";
import type { Msg, NatsConnection } from "@nats-io/transport-node";
import { agent } from "@byok/cursor-protocol";
import {
  AdapterPeerReplySchema,
  AdapterPeerRequestSchema,
  QUEUE_GROUPS,
  type AdapterPeerReply,
  type BusNames,
  type RunId,
} from "@byok/contracts";
import { BusError, BusPayloads, busRequest, PayloadFailure, type Logger } from "@byok/platform";
import { parseConnectCode, type ConnectCode } from "./session-port.ts";
import type { AppendOutcome } from "./run-registry.ts";
import type { ForwardResult, OwnerHandlers, PeerLink, ProbeResult, RoutedAppend, ServedRun } from "./peer-link.ts";

/** A probe is answered at once by a live owner. */
const PROBE_TIMEOUT_MS = 2_000;

type ReplyInit = MessageInitShape<typeof AdapterPeerReplySchema>;

export function natsPeerLink(nc: NatsConnection, names: BusNames, log: Logger): PeerLink {
  // A forwarded append can carry a large tool result: over one NATS message it goes through the payload bucket.
  const payloads = BusPayloads.of(nc, names);
  return {
    async probe(requestId, memberId): Promise<ProbeResult> {
      try {
        const reply = await busRequest(
          nc,
          names.adapterRun(requestId),
          AdapterPeerRequestSchema,
          { kind: { case: "probe", value: { memberId } } },
          AdapterPeerReplySchema,
          { timeoutMs: PROBE_TIMEOUT_MS },
        );
        const outcome = outcomeOf(reply);
        if (outcome.kind === "rejected") return { kind: "owned", rejection: { code: outcome.code, message: outcome.message } };
        return { kind: "owned", rejection: { code: "failed_precondition", message: "another adapter instance serves this request id" } };
      } catch (err) {
        if (err instanceof BusError && err.kind === "no_responders") return { kind: "no_owner" };
        return { kind: "failed", message: (err as Error).message };
      }
    },

    serve(requestId, handlers): ServedRun {
      const subject = names.adapterRun(requestId);
      const sub = nc.subscribe(subject, {
        queue: QUEUE_GROUPS.adapterRunOwner,
        callback: (err, msg) => {
          if (err) {
            log.error({ err, request_id: requestId }, "run owner subscription failed");
            return;
          }
          void answer(requestId, msg, payloads, handlers, log);
        },
      });
      // No flush first: the server handles this connection's SUB before the announcement after it,
      // so an instance that hears the announcement finds the subscription.
      try {
        nc.publish(names.adapterRunOwner(requestId));
      } catch (err) {
        log.warn({ err, request_id: requestId }, "could not announce the run owner");
      }
      return { stop: () => sub.unsubscribe() };
    },

    async forward(append: RoutedAppend, timeoutMs: number): Promise<ForwardResult> {
      try {
        const reply = await busRequest(
          nc,
          names.adapterRun(append.requestId),
          AdapterPeerRequestSchema,
          {
            kind: {
              case: "append",
              value: { requestId: append.requestId, memberId: append.memberId, seqno: BigInt(append.seqno), message: append.bytes, headers: append.headers },
            },
          },
          AdapterPeerReplySchema,
          { timeoutMs, payloads },
        );
        return { kind: "answered", outcome: outcomeOf(reply) };
      } catch (err) {
        if (err instanceof BusError && err.kind === "no_responders") return { kind: "no_owner" };
        return { kind: "failed", message: (err as Error).message };
      }
    },

    watchOwner(requestId: RunId, onOwner: () => void): () => void {
      const sub = nc.subscribe(names.adapterRunOwner(requestId), { callback: (err) => void (err ? undefined : onOwner()) });
      return () => sub.unsubscribe();
    },
  };
}

async function answer(requestId: RunId, msg: Msg, payloads: BusPayloads, handlers: OwnerHandlers, log: Logger): Promise<void> {
  let reply: ReplyInit;
  try {
    const request = fromBinary(AdapterPeerRequestSchema, await payloads.incoming(msg));
    const kind = request.kind;
    switch (kind.case) {
      case "append": {
        const forwarded = kind.value;
        if (forwarded.requestId !== requestId) {
          reply = rejectedReply("invalid_argument", "the forwarded append names another request id");
          break;
        }
        let message: agent.AgentClientMessage;
        try {
          message = fromBinary(agent.AgentClientMessageSchema, forwarded.message);
        } catch {
          reply = rejectedReply("invalid_argument", "data does not decode as an AgentClientMessage");
          break;
        }
        const outcome = await handlers.append({
          requestId,
          memberId: forwarded.memberId,
          seqno: Number(forwarded.seqno),
          message,
          headers: forwarded.headers,
        });
        reply = replyOf(outcome);
        break;
      }
      case "probe":
        reply = { outcome: { case: "rejected", value: handlers.probe(kind.value.memberId) } };
        break;
      case undefined:
        reply = rejectedReply("invalid_argument", "empty peer request");
        break;
      default: {
        const never: never = kind;
        throw new Error(`unknown peer request ${JSON.stringify(never)}`);
      }
    }
  } catch (err) {
    log.error({ err, request_id: requestId }, "forwarded request failed");
    reply =
      err instanceof PayloadFailure
        ? rejectedReply("unavailable", "the forwarded append's payload could not be read; send it again")
        : rejectedReply("internal", "the owning adapter instance failed to handle the append");
  }
  if (msg.reply) msg.respond(toBinary(AdapterPeerReplySchema, create(AdapterPeerReplySchema, reply)));
}

function replyOf(outcome: AppendOutcome): ReplyInit {
  switch (outcome.kind) {
    case "accepted":
      return { outcome: { case: "accepted", value: {} } };
    case "duplicate":
      return { outcome: { case: "duplicate", value: {} } };
    case "ignored":
      return { outcome: { case: "ignored", value: {} } };
    case "rejected":
      return rejectedReply(outcome.code, outcome.message);
    default: {
      const never: never = outcome;
      throw new Error(`unknown append outcome ${JSON.stringify(never)}`);
    }
  }
}

function rejectedReply(code: ConnectCode, message: string): ReplyInit {
  return { outcome: { case: "rejected", value: { code, message } } };
}

function outcomeOf(reply: AdapterPeerReply): AppendOutcome {
  const outcome = reply.outcome;
  switch (outcome.case) {
    case "accepted":
      return { kind: "accepted" };
    case "duplicate":
      return { kind: "duplicate" };
    case "ignored":
      return { kind: "ignored" };
    case "rejected": {
      const code = parseConnectCode(outcome.value.code) ?? "internal";
      return { kind: "rejected", code, message: outcome.value.message };
    }
    case undefined:
      return { kind: "rejected", code: "internal", message: "the owning adapter instance sent an empty answer" };
    default: {
      const never: never = outcome;
      throw new Error(`unknown peer reply ${JSON.stringify(never)}`);
    }
  }
}
