/**
 * The BidiAppend request body: BidiAppendRequest{data = lowercase hex of the
 * serialized AgentClientMessage, request_id, append_seqno} (cursor-agent-protocol.md §1.5).
 */
import { create, toBinary } from "@bufbuild/protobuf";
import { agent, aiserver } from "@byok/cursor-protocol";

export function encodeBidiAppend(requestId: string, seqno: number, message: agent.AgentClientMessage): Uint8Array {
  return toBinary(
    aiserver.BidiAppendRequestSchema,
    create(aiserver.BidiAppendRequestSchema, {
      data: Buffer.from(toBinary(agent.AgentClientMessageSchema, message)).toString("hex"),
      requestId: { requestId },
      appendSeqno: BigInt(seqno),
    }),
  );
}
