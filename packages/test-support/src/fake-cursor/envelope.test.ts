/**
 * The fake client's wire codec against the synthetic test vectors of
 * cursor-agent-protocol.md §13 (generated there with protoc-compiled encoders).
 */
import { createHash } from "node:crypto";
import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { agent, aiserver } from "@byok/cursor-protocol";
import { encodeBidiAppend } from "./append-codec.ts";
import { EnvelopeReader, encodeEnvelope, parseEndStream, FLAG_COMPRESSED } from "./envelope.ts";

const REQUEST_ID = "00000000-0000-4000-8000-000000000001";
const hex = (s: string): Buffer => Buffer.from(s.replace(/\s+/g, ""), "hex");

const VECTORS = {
  runSseBody: "00 00000026 0a24 3030303030303030 2d30303030 2d34303030 2d38303030 2d303030303030303030303031",
  heartbeatFrame: "00000000040a026a00",
  textDeltaHiFrame: "00000000080a060a040a024869",
  turnEndedFrame: "00000000080a067204080a1002",
  endStreamOk: "02000000027b7d",
  appendHeartbeatSeqno1:
    "0a043361303012260a2430303030303030302d303030302d343030302d383030302d3030303030303030303030311801",
  kvSetAckId0: "1a021a00",
  kvSetAckId5: "1a0408051a00",
  kvSetFrame:
    "000000005522531a510a20f871eafd30bf929f4e246510ce1a6316dd59e17b8d7b5f50e362e192dd1b9718122d7b22726f6c65223a2273797374656d222c22636f6e74656e74223a22596f7520617265206120746573742e227d",
};
const PROVIDER_ERROR_JSON =
  '{"error":{"code":"unavailable","message":"boom","details":[{"type":"aiserver.v1.ErrorDetails","value":"CDkSGgoMU2VydmVyIEVycm9yEgRib29tIAEoATAAGAA"}]}}';

function decodeServerFrame(bytes: Buffer): agent.AgentServerMessage {
  const frames = new EnvelopeReader().push(bytes);
  expect(frames).toHaveLength(1);
  expect(frames[0]!.endStream).toBe(false);
  return fromBinary(agent.AgentServerMessageSchema, frames[0]!.payload);
}

describe("fake Cursor client codec (§13 vectors)", () => {
  it("encodes the RunSSE request body byte for byte", () => {
    const body = encodeEnvelope(toBinary(agent.BidiRequestIdSchema, create(agent.BidiRequestIdSchema, { requestId: REQUEST_ID })));
    expect(body.toString("hex")).toBe(hex(VECTORS.runSseBody).toString("hex"));
  });

  it("decodes heartbeat, text_delta and turn_ended frames", () => {
    expect(decodeServerFrame(hex(VECTORS.heartbeatFrame)).message).toMatchObject({ case: "interactionUpdate", value: { message: { case: "heartbeat" } } });
    const text = decodeServerFrame(hex(VECTORS.textDeltaHiFrame)).message;
    expect(text.case === "interactionUpdate" && text.value.message.case === "textDelta" ? text.value.message.value.text : undefined).toBe("Hi");
    const ended = decodeServerFrame(hex(VECTORS.turnEndedFrame)).message;
    const turnEnded = ended.case === "interactionUpdate" && ended.value.message.case === "turnEnded" ? ended.value.message.value : undefined;
    expect(turnEnded?.inputTokens).toBe(10n);
    expect(turnEnded?.outputTokens).toBe(2n);
    expect(turnEnded?.cacheReadTokens).toBeUndefined();
  });

  it("parses EndStream success and the provider error with unpadded base64 details", () => {
    const ok = new EnvelopeReader().push(hex(VECTORS.endStreamOk));
    expect(ok).toHaveLength(1);
    expect(ok[0]!.endStream).toBe(true);
    expect(parseEndStream(ok[0]!.payload)).toEqual({ kind: "ok", metadata: {} });

    const json = Buffer.from(PROVIDER_ERROR_JSON, "utf8");
    expect(json.length).toBe(0x97);
    const frame = Buffer.concat([hex("0200000097"), json]);
    const [end] = new EnvelopeReader().push(frame);
    const outcome = parseEndStream(end!.payload);
    if (outcome.kind !== "error") throw new Error("expected an error EndStream");
    expect(outcome.code).toBe("unavailable");
    expect(outcome.message).toBe("boom");
    expect(outcome.details[0]!.type).toBe("aiserver.v1.ErrorDetails");
    const details = fromBinary(aiserver.ErrorDetailsSchema, outcome.details[0]!.value);
    expect(details.error).toBe(aiserver.ErrorDetails_Error.PROVIDER_ERROR);
    expect(details.details?.title).toBe("Server Error");
    expect(details.details?.detail).toBe("boom");
    expect(details.details?.isRetryable).toBe(true);
    expect(details.isExpected).toBe(false);
  });

  it("encodes a client_heartbeat BidiAppend with seqno 1 byte for byte", () => {
    const heartbeat = create(agent.AgentClientMessageSchema, { message: { case: "clientHeartbeat", value: {} } });
    expect(Buffer.from(encodeBidiAppend(REQUEST_ID, 1, heartbeat)).toString("hex")).toBe(VECTORS.appendHeartbeatSeqno1);
  });

  it("encodes KV set ACKs with id 0 omitted and id 5 present", () => {
    const ack = (id: number): string =>
      Buffer.from(
        toBinary(agent.AgentClientMessageSchema, create(agent.AgentClientMessageSchema, { message: { case: "kvClientMessage", value: { id, message: { case: "setBlobResult", value: {} } } } })),
      ).toString("hex");
    expect(ack(0)).toBe(VECTORS.kvSetAckId0);
    expect(ack(5)).toBe(VECTORS.kvSetAckId5);
  });

  it("decodes the KV set frame; its blob id is the SHA-256 of the data", () => {
    const m = decodeServerFrame(hex(VECTORS.kvSetFrame)).message;
    if (m.case !== "kvServerMessage" || m.value.message.case !== "setBlobArgs") throw new Error("expected kv set");
    expect(m.value.id).toBe(0);
    const { blobId, blobData } = m.value.message.value;
    expect(Buffer.from(blobData).toString("utf8")).toBe('{"role":"system","content":"You are a test."}');
    expect(Buffer.from(blobId).toString("base64")).toBe("+HHq/TC/kp9OJGUQzhpjFt1Z4XuNe19Q42Lhkt0blxg=");
    expect(Buffer.from(blobId).equals(createHash("sha256").update(blobData).digest())).toBe(true);
  });

  it("parses frames split at every byte boundary and several frames per chunk", () => {
    const all = Buffer.concat([hex(VECTORS.heartbeatFrame), hex(VECTORS.textDeltaHiFrame), hex(VECTORS.kvSetFrame), hex(VECTORS.endStreamOk)]);
    const whole = new EnvelopeReader().push(all);
    expect(whole.map((f) => f.endStream)).toEqual([false, false, false, true]);
    for (let cut = 1; cut < all.length; cut++) {
      const reader = new EnvelopeReader();
      const frames = [...reader.push(all.subarray(0, cut)), ...reader.push(all.subarray(cut))];
      expect(frames.map((f) => Buffer.from(f.payload).toString("hex"))).toEqual(whole.map((f) => Buffer.from(f.payload).toString("hex")));
      expect(reader.pendingBytes).toBe(0);
    }
    const reader = new EnvelopeReader();
    const byteByByte = [...all].flatMap((b) => reader.push(Uint8Array.of(b)));
    expect(byteByByte).toHaveLength(4);
  });

  it("gunzips frames with the compressed flag and keeps the end flag apart", () => {
    const payload = hex("0a026a00");
    const compressed = encodeEnvelope(gzipSync(payload), FLAG_COMPRESSED);
    const endCompressed = encodeEnvelope(gzipSync(Buffer.from("{}")), FLAG_COMPRESSED | 0x02);
    const frames = new EnvelopeReader().push(Buffer.concat([compressed, endCompressed]));
    expect(Buffer.from(frames[0]!.payload).toString("hex")).toBe("0a026a00");
    expect(frames[0]!.endStream).toBe(false);
    expect(frames[1]!.endStream).toBe(true);
    expect(parseEndStream(frames[1]!.payload).kind).toBe("ok");
  });

  it("reports a frame cut off at the end as pending bytes", () => {
    const reader = new EnvelopeReader();
    expect(reader.push(hex(VECTORS.textDeltaHiFrame).subarray(0, 7))).toHaveLength(0);
    expect(reader.pendingBytes).toBe(7);
  });
});
