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

function encodePart<Desc extends DescMessage>(schema: Desc, event: MessageShape<Desc> | MessageInitShape<Desc>): Uint8Array {
  return sizeDelimitedEncode(schema, create(schema, event));
}

/** The events of one message, in order; throws on bytes that are not whole size-delimited events. */
function decodeFrame<Desc extends DescMessage>(schema: Desc, data: Uint8Array, what: string): Array<MessageShape<Desc>> {
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
}

/** One size-delimited ModelEvent; frames are these concatenated. */
export function encodeModelEventPart(event: ModelEvent | MessageInitShape<typeof ModelEventSchema>): Uint8Array {
  return encodePart(ModelEventSchema, event);
}

/** A message with the given events (tests and tools; the gateway joins parts as it goes). */
export function encodeModelEventFrame(events: ReadonlyArray<ModelEvent | MessageInitShape<typeof ModelEventSchema>>): Uint8Array {
  return joinFrameParts(events.map(encodeModelEventPart));
}

export function decodeModelEventFrame(data: Uint8Array): ModelEvent[] {
  return decodeFrame(ModelEventSchema, data, "ModelEvent");
}

/** One size-delimited ClientEvent; frames are these concatenated. */
export function encodeClientEventPart(event: ClientEvent | MessageInitShape<typeof ClientEventSchema>): Uint8Array {
  return encodePart(ClientEventSchema, event);
}

/** A message with the given events (tests; the run owner joins parts as it goes). */
export function encodeClientEventFrame(events: ReadonlyArray<ClientEvent | MessageInitShape<typeof ClientEventSchema>>): Uint8Array {
  return joinFrameParts(events.map(encodeClientEventPart));
}

export function decodeClientEventFrame(data: Uint8Array): ClientEvent[] {
  return decodeFrame(ClientEventSchema, data, "ClientEvent");
}
