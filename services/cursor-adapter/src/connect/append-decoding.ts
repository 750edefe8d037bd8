/**
 * BidiAppendRequest -> (request id, append_seqno, AgentClientMessage).
 * `data` is the hex string of a serialized AgentClientMessage; anything that is
 * not exactly that is an invalid append (Cursor's speech-to-text reuses the
 * envelope with other payloads; those are not ours to serve).
 */
import { fromBinary } from "@bufbuild/protobuf";
import { agent, type aiserver } from "@byok/cursor-protocol";

export type DecodedAppend =
  | { kind: "ok"; requestId: string; seqno: number; message: agent.AgentClientMessage; bytes: Uint8Array }
  | { kind: "invalid"; message: string };

export function decodeBidiAppend(request: aiserver.BidiAppendRequest): DecodedAppend {
  const requestId = request.requestId?.requestId ?? "";
  if (requestId === "") return invalid("request_id is missing");
  const seqno = request.appendSeqno;
  if (seqno < 0n || seqno > BigInt(Number.MAX_SAFE_INTEGER)) return invalid(`append_seqno ${seqno} is out of range`);
  if (request.data === "") {
    return invalid(request.dataBinary.length > 0 ? "data_binary is not supported; send data as hex" : "data is empty");
  }
  // Node's hex decoding stops at the first pair that is not hex (and drops an odd last digit): a shorter
  // result is the check, without a second pass over data that grows with the conversation.
  const bytes = Buffer.from(request.data, "hex");
  if (bytes.length * 2 !== request.data.length) return invalid("data is not a hex string of even length");
  let message: agent.AgentClientMessage;
  try {
    message = fromBinary(agent.AgentClientMessageSchema, bytes);
  } catch {
    return invalid("data does not decode as an AgentClientMessage");
  }
  if (message.message.case === undefined) return invalid("data holds an AgentClientMessage with no message set");
  return { kind: "ok", requestId, seqno: Number(seqno), message, bytes };
}

function invalid(message: string): DecodedAppend {
  return { kind: "invalid", message };
}
