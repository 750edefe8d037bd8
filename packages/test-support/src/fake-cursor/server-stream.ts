/**
 * Reading a RunSSE response body: Connect envelopes parsed as bytes arrive,
 * AgentServerMessages handed on in order, and the end decided only by an
 * envelope with flags & 0x02. Anything else is reported as a broken stream.
 */
import { fromBinary } from "@bufbuild/protobuf";
import { agent } from "@byok/cursor-protocol";
import { EnvelopeReader, parseEndStream, type EndStreamOutcome } from "./envelope.ts";
import type { RunEnd } from "./run-types.ts";
import type { StreamResponse } from "./transport.ts";

export interface ServerStreamSink {
  onFrame(message: agent.AgentServerMessage): void;
  onEnd(outcome: EndStreamOutcome): void;
  onViolation(text: string): void;
}

export async function readServerStream(stream: StreamResponse, sink: ServerStreamSink): Promise<RunEnd> {
  if (stream.status !== 200) {
    const chunks: Buffer[] = [];
    for await (const c of stream.body) chunks.push(c);
    return { kind: "broken", reason: `RunSSE answered HTTP ${stream.status}: ${Buffer.concat(chunks).toString("utf8").slice(0, 500)}` };
  }
  const reader = new EnvelopeReader();
  let end: EndStreamOutcome | undefined;
  try {
    for await (const chunk of stream.body) {
      if (end !== undefined) {
        sink.onViolation(`${chunk.length} bytes after EndStream`);
        continue;
      }
      for (const envelope of reader.push(chunk)) {
        if (end !== undefined) {
          sink.onViolation("frame after EndStream");
          continue;
        }
        if (envelope.endStream) {
          end = parseEndStream(envelope.payload);
          sink.onEnd(end);
          continue;
        }
        let message: agent.AgentServerMessage;
        try {
          message = fromBinary(agent.AgentServerMessageSchema, envelope.payload);
        } catch (err) {
          sink.onViolation(`undecodable AgentServerMessage (${envelope.payload.length} bytes): ${(err as Error).message}`);
          continue;
        }
        sink.onFrame(message);
      }
    }
  } catch (err) {
    if (end !== undefined) return end;
    return { kind: "broken", reason: `RunSSE body failed: ${(err as Error).message}` };
  }
  if (end !== undefined) return end;
  return {
    kind: "broken",
    reason: reader.pendingBytes > 0 ? `RunSSE body ended inside a frame (${reader.pendingBytes} bytes)` : "RunSSE body ended without EndStream",
  };
}
