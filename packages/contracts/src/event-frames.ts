/**
 * The wire form of streamed events on the bus: one NATS message carries one
 * or more events, each size-delimited (varint length, then the protobuf
 * bytes), in seq order.
 *
 * - ModelEvents on a model call's inbox: the provider gateway packs the
 *   events it produces in one event-loop turn into one message (a burst of
 *   chunks read together: start, block start and first delta; block end,
 *   usage and done).
 * - ClientEvents on a run's events subject: the run owner packs what it
 *   forwards in one pass of the event loop (block start and first delta,
 *   block end and the assembled response) into one message.
 *
 * So a model call or a run costs a few bus messages instead of one per event.
 */
import { create, fromBinary, type DescMessage, type MessageInitShape, type MessageShape } from "@bufbuild/protobuf";
import { BinaryReader, sizeDelimitedEncode } from "@bufbuild/protobuf/wire";
import { ModelEventSchema, type ModelEvent } from "./gen/byok/v1/model_pb.js";
import { ClientEventSchema, type ClientEvent } from "./gen/byok/v1/run_pb.js";

/** The payload of one message: the given parts (size-delimited events), in order. */
export function joinFrameParts(parts: readonly Uint8Array[]): Uint8Array {
  if (parts.length === 1) return parts[0]!;
  let length = 0;
  for (const part of parts) length += part.length;
  const joined = new Uint8Array(length);
  let at = 0;
  for (const part of parts) {
    joined.set(part, at);
    at += part.length;
  }
  return joined;
}

/**
 * The parts as few messages as fit in `maxBytes` each, in order: usually one. A message's events stay
 * whole, so one part larger than `maxBytes` is a message of its own (which the bus may refuse).
 */
export function frameMessagesWithin(parts: readonly Uint8Array[], maxBytes: number): Uint8Array[] {
  let total = 0;
  for (const part of parts) total += part.length;
  if (total <= maxBytes) return [joinFrameParts(parts)];
  const messages: Uint8Array[] = [];
  let group: Uint8Array[] = [];
  let size = 0;
  for (const part of parts) {
    if (group.length > 0 && size + part.length > maxBytes) {
      messages.push(joinFrameParts(group));
      group = [];
      size = 0;
    }
    group.push(part);
    size += part.length;
  }
  if (group.length > 0) messages.push(joinFrameParts(group));
  return messages;
}

/** Encoding and decoding of one kind of event frame. */
interface EventFrames<Desc extends DescMessage> {
  /** One size-delimited event; frames are these concatenated. */
  part(event: MessageShape<Desc> | MessageInitShape<Desc>): Uint8Array;
  /** A message with the given events (tests and tools; the senders join parts as they go). */
  frame(events: ReadonlyArray<MessageShape<Desc> | MessageInitShape<Desc>>): Uint8Array;
  /** The events of one message, in order; throws on bytes that are not whole size-delimited events. */
  decode(data: Uint8Array): Array<MessageShape<Desc>>;
}

function eventFrames<Desc extends DescMessage>(schema: Desc, what: string): EventFrames<Desc> {
  const part = (event: MessageShape<Desc> | MessageInitShape<Desc>): Uint8Array => sizeDelimitedEncode(schema, create(schema, event));
  return {
    part,
    frame: (events) => joinFrameParts(events.map(part)),
    decode(data) {
      const events: Array<MessageShape<Desc>> = [];
      const reader = new BinaryReader(data);
      while (reader.pos < reader.len) {
        const length = reader.uint32();
        const end = reader.pos + length;
        if (end > reader.len) throw new Error(`truncated ${what} frame`);
        events.push(fromBinary(schema, data.subarray(reader.pos, end)));
        reader.pos = end;
      }
      if (events.length === 0) throw new Error(`empty ${what} frame`);
      return events;
    },
  };
}

const modelEventFrames: EventFrames<typeof ModelEventSchema> = eventFrames(ModelEventSchema, "ModelEvent");
const clientEventFrames: EventFrames<typeof ClientEventSchema> = eventFrames(ClientEventSchema, "ClientEvent");

export const encodeModelEventPart: (event: ModelEvent | MessageInitShape<typeof ModelEventSchema>) => Uint8Array = modelEventFrames.part;
export const encodeModelEventFrame: (events: ReadonlyArray<ModelEvent | MessageInitShape<typeof ModelEventSchema>>) => Uint8Array = modelEventFrames.frame;
export const decodeModelEventFrame: (data: Uint8Array) => ModelEvent[] = modelEventFrames.decode;
export const encodeClientEventPart: (event: ClientEvent | MessageInitShape<typeof ClientEventSchema>) => Uint8Array = clientEventFrames.part;
export const encodeClientEventFrame: (events: ReadonlyArray<ClientEvent | MessageInitShape<typeof ClientEventSchema>>) => Uint8Array = clientEventFrames.frame;
export const decodeClientEventFrame: (data: Uint8Array) => ClientEvent[] = clientEventFrames.decode;
