/**
 * Typed protobuf request/reply over core NATS: the one place where NATS request
 * errors are mapped (timeout, no responders, decode failure) into BusError.
 * With `payloads`, a request or reply too large for one NATS message travels
 * through the payload bucket (bus-payloads.ts) in either direction.
 */
import { create, fromBinary, toBinary, type DescMessage, type MessageInitShape, type MessageShape } from "@bufbuild/protobuf";
import { NoRespondersError, TimeoutError, type Msg, type NatsConnection, type Subscription } from "@nats-io/transport-node";
import type { Logger } from "pino";
import { BusPayloads, PayloadFailure } from "./bus-payloads.ts";

export type BusErrorKind = "timeout" | "no_responders" | "decode" | "transport" | "payload";

export class BusError extends Error {
  override readonly name = "BusError";
  readonly kind: BusErrorKind;
  readonly subject: string;
  constructor(kind: BusErrorKind, subject: string, message: string, options?: { cause?: unknown }) {
    super(`${subject}: ${message}`, options);
    this.kind = kind;
    this.subject = subject;
  }
}

export async function busRequest<I extends DescMessage, O extends DescMessage>(
  nc: NatsConnection,
  subject: string,
  requestSchema: I,
  request: MessageInitShape<I>,
  responseSchema: O,
  options: { timeoutMs: number; payloads?: BusPayloads | undefined },
): Promise<MessageShape<O>> {
  const payload = toBinary(requestSchema, create(requestSchema, request));
  const payloads = options.payloads;
  let reply: Msg;
  try {
    const outgoing = payloads === undefined ? { data: payload, headers: undefined } : await payloads.outgoing(payload);
    reply = await nc.request(subject, outgoing.data, { timeout: options.timeoutMs, ...(outgoing.headers === undefined ? {} : { headers: outgoing.headers }) });
  } catch (cause) {
    if (cause instanceof PayloadFailure) throw new BusError("payload", subject, cause.message, { cause });
    if (cause instanceof TimeoutError) throw new BusError("timeout", subject, `no reply within ${options.timeoutMs} ms`, { cause });
    if (cause instanceof NoRespondersError || (cause as Error)?.cause instanceof NoRespondersError)
      throw new BusError("no_responders", subject, "no service is listening", { cause });
    throw new BusError("transport", subject, (cause as Error).message, { cause });
  }
  let replyData: Uint8Array;
  try {
    replyData = payloads === undefined ? reply.data : await payloads.incoming(reply);
  } catch (cause) {
    throw new BusError("payload", subject, (cause as Error).message, { cause });
  }
  try {
    return fromBinary(responseSchema, replyData);
  } catch (cause) {
    throw new BusError("decode", subject, "undecodable reply", { cause });
  }
}

export interface ServeOptions {
  queue?: string;
  log: Logger;
  /** Where requests and replies too large for one NATS message are kept (unset: inline only). */
  payloads?: BusPayloads;
}

/**
 * Answer requests on `subject` with `handler`. A handler that throws gets the
 * response built by `onError` (services decide how an internal error looks on
 * their wire); a request that does not decode is answered the same way.
 */
export function serveRequests<I extends DescMessage, O extends DescMessage>(
  nc: NatsConnection,
  subject: string,
  requestSchema: I,
  responseSchema: O,
  handler: (request: MessageShape<I>, msg: Msg) => Promise<MessageInitShape<O>>,
  onError: (error: unknown) => MessageInitShape<O>,
  options: ServeOptions,
): Subscription {
  return nc.subscribe(subject, {
    ...(options.queue === undefined ? {} : { queue: options.queue }),
    callback: (err, msg) => {
      if (err) {
        options.log.error({ err, subject }, "subscription error");
        return;
      }
      void (async () => {
        const payloads = options.payloads;
        let response: MessageInitShape<O>;
        try {
          const data = payloads === undefined ? msg.data : await payloads.incoming(msg);
          const request = fromBinary(requestSchema, data);
          response = await handler(request, msg);
        } catch (error) {
          options.log.error({ err: error, subject }, "request handler failed");
          response = onError(error);
        }
        if (!msg.reply) return;
        let bytes = toBinary(responseSchema, create(responseSchema, response));
        if (payloads !== undefined && payloads.tooLarge(bytes)) {
          try {
            const outgoing = await payloads.outgoing(bytes);
            msg.respond(outgoing.data, outgoing.headers === undefined ? undefined : { headers: outgoing.headers });
            return;
          } catch (error) {
            options.log.error({ err: error, subject }, "cannot store a large reply");
            bytes = toBinary(responseSchema, create(responseSchema, onError(error)));
          }
        }
        msg.respond(bytes);
      })();
    },
  });
}
