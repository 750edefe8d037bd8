/**
 * Fuzz targets of the edge proxy's parsers (fuzz.test.ts runs them a few
 * hundred times each, bench/fuzz.ts a million): the Connect envelope parser
 * and content decoding, BidiAppend inspection (protobuf and JSON bodies, the
 * hex data inside) and the RunSSE request id. None of them may throw on any
 * input; what they return must agree with the bytes.
 */
import { create, toBinary, toJsonString } from "@bufbuild/protobuf";
import fc from "fast-check";
import { agent, aiserver } from "@byok/cursor-protocol";
import { fuzzTarget, type Fuzzable } from "@byok/test-support/fuzz";
import { decodeContent, parseEnvelopes } from "../http-body.ts";
import { inspectBidiAppend, runSseRequestId } from "../routing.ts";

function envelope(flags: number, payload: Uint8Array): Buffer {
  const header = Buffer.alloc(5);
  header.writeUInt8(flags, 0);
  header.writeUInt32BE(payload.length, 1);
  return Buffer.concat([header, payload]);
}

const frames = fc.array(fc.record({ flags: fc.integer({ min: 0, max: 255 }), payload: fc.uint8Array({ maxLength: 64 }) }), { maxLength: 5 });

const envelopeBodies = fc.oneof(
  fc.record({ kind: fc.constant("random" as const), bytes: fc.uint8Array({ maxLength: 96 }) }),
  fc.record({ kind: fc.constant("frames" as const), frames }),
  fc.record({ kind: fc.constant("damaged" as const), frames, cut: fc.integer({ min: 1, max: 8 }), extra: fc.uint8Array({ maxLength: 4 }) }),
);

const connectEnvelopes = fuzzTarget({
  name: "edge proxy: Connect envelopes",
  arbitrary: fc.tuple(envelopeBodies, fc.constantFrom("identity", "gzip", "deflate", "br", "zstd", "", undefined)),
  check([body, encoding]) {
    let bytes: Buffer;
    switch (body.kind) {
      case "random":
        bytes = Buffer.from(body.bytes);
        break;
      case "frames":
        bytes = Buffer.concat(body.frames.map((f) => envelope(f.flags, f.payload)));
        break;
      case "damaged": {
        const whole = Buffer.concat(body.frames.map((f) => envelope(f.flags, f.payload)));
        bytes = Buffer.concat([whole.subarray(0, Math.max(0, whole.length - body.cut)), body.extra]);
        break;
      }
    }
    const parsed = parseEnvelopes(bytes);
    if (parsed !== undefined) {
      // What was parsed is exactly the input, frame by frame.
      const again = Buffer.concat(parsed.map((f) => envelope(f.flags, f.payload)));
      if (!again.equals(bytes)) throw new Error("parsed envelopes do not add up to the input");
    }
    if (body.kind === "frames") {
      if (parsed === undefined) throw new Error("well-formed envelopes were refused");
      if (parsed.length !== body.frames.length) throw new Error("wrong number of envelopes");
      parsed.forEach((f, i) => {
        if (f.flags !== body.frames[i]!.flags || !Buffer.from(body.frames[i]!.payload).equals(f.payload)) throw new Error(`envelope ${i} differs`);
      });
    }
    const decoded = decodeContent(bytes, encoding);
    if (decoded.kind === "ok" && (encoding ?? "identity") === "identity" && decoded.bytes !== bytes) throw new Error("identity decoding changed the bytes");
  },
});

const clientMessages = fc.oneof(
  fc.record({ modelId: fc.string({ maxLength: 12 }), conversationId: fc.string({ maxLength: 12 }) }).map(({ modelId, conversationId }) =>
    create(agent.AgentClientMessageSchema, { message: { case: "runRequest", value: { requestedModel: { modelId }, conversationId, conversationState: {} } } }),
  ),
  fc.constant(create(agent.AgentClientMessageSchema, { message: { case: "clientHeartbeat", value: {} } })),
  fc.nat().map((id) => create(agent.AgentClientMessageSchema, { message: { case: "kvClientMessage", value: { id, message: { case: "setBlobResult", value: {} } } } })),
);

const appendData = fc.oneof(
  clientMessages.map((m) => Buffer.from(toBinary(agent.AgentClientMessageSchema, m)).toString("hex")),
  fc.uint8Array({ maxLength: 48 }).map((b) => Buffer.from(b).toString("hex")),
  fc.uint8Array({ maxLength: 48 }).map((b) => Buffer.from(b).toString("hex").toUpperCase()),
  fc.string({ maxLength: 48 }),
);

const appendBodies = fc.oneof(
  fc.record({ kind: fc.constant("random" as const), bytes: fc.uint8Array({ maxLength: 128 }), json: fc.boolean() }),
  fc.record({
    kind: fc.constant("append" as const),
    requestId: fc.string({ maxLength: 40 }),
    seqno: fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }),
    data: appendData,
    json: fc.boolean(),
  }),
);

const bidiAppendInspection = fuzzTarget({
  name: "edge proxy: BidiAppend inspection (hex appends)",
  arbitrary: appendBodies,
  check(body) {
    if (body.kind === "random") {
      inspectBidiAppend(body.bytes, body.json ? "application/json" : "application/proto");
      return;
    }
    const request = create(aiserver.BidiAppendRequestSchema, { requestId: { requestId: body.requestId }, appendSeqno: body.seqno, data: body.data });
    const bytes = body.json ? Buffer.from(toJsonString(aiserver.BidiAppendRequestSchema, request)) : toBinary(aiserver.BidiAppendRequestSchema, request);
    const inspection = inspectBidiAppend(bytes, body.json ? "application/json" : "application/proto");
    if (body.requestId === "") {
      if (inspection.kind !== "unreadable") throw new Error("an append without a request id was not refused");
      return;
    }
    if (inspection.kind === "unreadable") throw new Error("a well-formed append was unreadable");
    if (inspection.requestId !== body.requestId || inspection.seqno !== body.seqno) throw new Error("request id or seqno changed");
  },
});

const runSseIds = fuzzTarget({
  name: "edge proxy: RunSSE request id",
  arbitrary: fc.oneof(
    fc.uint8Array({ maxLength: 64 }),
    fc.string({ maxLength: 40 }).map((requestId) => toBinary(agent.BidiRequestIdSchema, create(agent.BidiRequestIdSchema, { requestId }))),
  ),
  check(bytes) {
    const id = runSseRequestId(bytes);
    if (id === "") throw new Error("an empty request id was returned");
  },
});

export const edgeProxyFuzzTargets: readonly Fuzzable[] = [connectEnvelopes, bidiAppendInspection, runSseIds];
