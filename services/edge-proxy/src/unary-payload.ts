/**
 * Reading and writing whole Connect unary answers: extract the protobuf payload
 * of a buffered origin answer (HTTP decoding, optional 5-byte envelope) and
 * relay a buffered answer to the client.
 */
import type { OutgoingHttpHeaders, ServerResponse } from "node:http";
import { fromBinary, type DescMessage } from "@bufbuild/protobuf";
import { ENVELOPE_COMPRESSED, ENVELOPE_END_STREAM, decodeContent, parseEnvelopes } from "./http-body.ts";
import { relayResponseHeaders, type BufferedResponse } from "./upstream.ts";

export type UnaryPayload = { kind: "ok"; payload: Buffer } | { kind: "unusable"; reason: string };

type Answer = Extract<BufferedResponse, { kind: "response" }>;

export function rawHeader(raw: readonly string[], name: string): string | undefined {
  for (let i = 0; i + 1 < raw.length; i += 2) if ((raw[i] ?? "").toLowerCase() === name) return raw[i + 1];
  return undefined;
}

/** The protobuf payload of a successful unary answer, checked against `schema` when given. */
export function unaryPayload(answer: BufferedResponse, schema: DescMessage | undefined): UnaryPayload {
  if (answer.kind === "failed") return { kind: "unusable", reason: answer.message };
  if (answer.status < 200 || answer.status > 299) return { kind: "unusable", reason: `HTTP ${answer.status}` };
  const decoded = decodeContent(answer.body, rawHeader(answer.rawHeaders, "content-encoding"));
  if (decoded.kind === "unsupported") return { kind: "unusable", reason: `compressed with ${decoded.encoding}` };
  if (decoded.kind === "corrupt") return { kind: "unusable", reason: `undecodable body: ${decoded.message}` };
  let payload = decoded.bytes;
  const contentType = (rawHeader(answer.rawHeaders, "content-type") ?? "").toLowerCase();
  if (contentType.startsWith("application/json")) return { kind: "unusable", reason: "JSON answer" };
  if (contentType.startsWith("application/connect+")) {
    const frames = parseEnvelopes(payload);
    const first = frames?.[0];
    if (!first || (first.flags & ENVELOPE_END_STREAM) !== 0) return { kind: "unusable", reason: "no message envelope" };
    if ((first.flags & ENVELOPE_COMPRESSED) !== 0) {
      const inner = decodeContent(first.payload, rawHeader(answer.rawHeaders, "connect-content-encoding"));
      if (inner.kind !== "ok") return { kind: "unusable", reason: "compressed envelope" };
      payload = inner.bytes;
    } else {
      payload = first.payload;
    }
  }
  if (schema) {
    try {
      fromBinary(schema, payload);
    } catch (err) {
      return { kind: "unusable", reason: `not a ${schema.typeName}: ${(err as Error).message}` };
    }
  }
  return { kind: "ok", payload };
}

/** Relays a buffered origin answer as it came (status, headers, body). */
export function relayBuffered(res: ServerResponse, answer: Answer): void {
  const headers = relayResponseHeaders(answer.rawHeaders, { "content-length": String(answer.body.length) });
  res.sendDate = false;
  res.writeHead(answer.status, answer.statusMessage, headers as unknown as OutgoingHttpHeaders);
  res.end(answer.body);
}

/** Answers with a protobuf payload built by the proxy, keeping the origin's other headers. */
export function sendPayload(res: ServerResponse, answer: Answer, payload: Buffer): void {
  const raw: string[] = [];
  for (let i = 0; i + 1 < answer.rawHeaders.length; i += 2) {
    const lower = (answer.rawHeaders[i] ?? "").toLowerCase();
    if (lower === "content-encoding" || lower === "content-type" || lower === "content-length") continue;
    raw.push(answer.rawHeaders[i] ?? "", answer.rawHeaders[i + 1] ?? "");
  }
  const headers = relayResponseHeaders(raw, { "content-type": "application/proto", "content-length": String(payload.length) });
  res.sendDate = false;
  res.writeHead(200, headers as unknown as OutgoingHttpHeaders);
  res.end(payload);
}
