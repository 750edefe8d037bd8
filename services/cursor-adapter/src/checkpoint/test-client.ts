/**
 * For tests: the client end of a KvChannel. Records every server frame and
 * answers KV requests on demand, like the IDE's blob store would.
 */
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { agent } from "@byok/cursor-protocol";
import { silentLogger } from "@byok/platform";
import { KvChannel, type KvChannelOptions } from "./kv-channel.ts";

export interface KvTestClient {
  kv: KvChannel;
  frames: agent.AgentServerMessage[];
  /** KV requests sent and not answered yet, oldest first. */
  openRequests(): agent.KvServerMessage[];
  ackSet(id: number, error?: string): void;
  answerGet(id: number, data: Uint8Array | { error: string }): void;
  /** Acknowledges every open SET. */
  ackAllSets(): number;
}

export function kvTestClient(timeouts: { setTimeoutMs?: number; getTimeoutMs?: number; onRoundTrip?: KvChannelOptions["onRoundTrip"] } = {}): KvTestClient {
  const frames: agent.AgentServerMessage[] = [];
  const answered = new Set<number>();
  const kv = new KvChannel({
    send: (message) => frames.push(message),
    log: silentLogger(),
    setTimeoutMs: timeouts.setTimeoutMs ?? 5_000,
    getTimeoutMs: timeouts.getTimeoutMs ?? 5_000,
    ...(timeouts.onRoundTrip === undefined ? {} : { onRoundTrip: timeouts.onRoundTrip }),
  });
  const openRequests = () =>
    frames
      .flatMap((f) => (f.message.case === "kvServerMessage" ? [f.message.value] : []))
      .filter((request) => !answered.has(request.id));
  const reply = (id: number, message: MessageInitShape<typeof agent.KvClientMessageSchema>["message"]) => {
    answered.add(id);
    kv.receive(create(agent.KvClientMessageSchema, { id, message }));
  };
  return {
    kv,
    frames,
    openRequests,
    ackSet(id, error) {
      reply(id, { case: "setBlobResult", value: error === undefined ? {} : { error: { message: error } } });
    },
    answerGet(id, data) {
      reply(id, { case: "getBlobResult", value: data instanceof Uint8Array ? { blobData: data } : { error: { message: data.error } } });
    },
    ackAllSets() {
      const sets = openRequests().filter((r) => r.message.case === "setBlobArgs");
      for (const request of sets) this.ackSet(request.id);
      return sets.length;
    },
  };
}
