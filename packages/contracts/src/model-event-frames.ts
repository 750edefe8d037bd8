/**
 * The wire form of a model call's ModelEvents on the caller's inbox: one NATS
 * message carries one or more ModelEvents, each size-delimited (varint length,
 * then the protobuf bytes), in seq order. The provider gateway packs the
 * events it produces in one event-loop turn into one message (a burst of
 * chunks read together: start, block start and first delta; block end, usage
 * and done), so a call costs a few bus messages instead of one per event.
 */
import { create, fromBinary, type MessageInitShape } from "@bufbuild/protobuf";
import { BinaryReader, sizeDelimitedEncode } from "@bufbuild/protobuf/wire";
import { ModelEventSchema, type ModelEvent } from "./gen/byok/v1/model_pb.js";

/** One size-delimited ModelEvent; frames are these concatenated. */
export function encodeModelEventPart(event: ModelEvent | MessageInitShape<typeof ModelEventSchema>): Uint8Array {
  return sizeDelimitedEncode(ModelEventSchema, create(ModelEventSchema, event));
}

/** The payload of one message: the given parts, in order. */
export function joinModelEventParts(parts: readonly Uint8Array[]): Uint8Array {
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

/** A message with the given events (tests and tools; the gateway joins parts as it goes). */
export function encodeModelEventFrame(events: ReadonlyArray<ModelEvent | MessageInitShape<typeof ModelEventSchema>>): Uint8Array {
  return joinModelEventParts(events.map(encodeModelEventPart));
}

/** The events of one message, in order; throws on bytes that are not whole size-delimited ModelEvents. */
export function decodeModelEventFrame(data: Uint8Array): ModelEvent[] {
  const events: ModelEvent[] = [];
  const reader = new BinaryReader(data);
  while (reader.pos < reader.len) {
    const length = reader.uint32();
    const end = reader.pos + length;
    if (end > reader.len) throw new Error("truncated ModelEvent frame");
    events.push(fromBinary(ModelEventSchema, data.subarray(reader.pos, end)));
    reader.pos = end;
  }
  if (events.length === 0) throw new Error("empty ModelEvent frame");
  return events;
}
