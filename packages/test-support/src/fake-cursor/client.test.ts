/**
 * The fake client against a tiny scripted server (real HTTP): it must speak the
 * transport correctly (concurrent RunSSE + appends, seqnos, hex data, KV ACK
 * with the same id, exec answers) and catch the rule breaks it is meant to catch
 * (a checkpoint that references a blob before its ACK).
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { create, fromBinary, toBinary, type MessageInitShape } from "@bufbuild/protobuf";
import { agent, aiserver } from "@byok/cursor-protocol";
import { blobIdOf } from "./blob-store.ts";
import { FakeCursorClient } from "./client.ts";
import { encodeEnvelope } from "./envelope.ts";

type Script = (io: ServerIo) => Promise<void>;

interface ServerIo {
  send(message: agent.AgentServerMessage): void;
  end(json: string): void;
  /** Next client message in seqno order (after seqno 0). */
  next(): Promise<agent.AgentClientMessage>;
  runRequest: agent.AgentRunRequest;
  seqnos: number[];
}

/** One request id at a time; appends ordered by seqno like the real adapter. */
async function startScriptedServer(script: Script): Promise<{ url: string; stop(): Promise<void>; seqnos: number[] }> {
  const seqnos: number[] = [];
  const buffered = new Map<number, agent.AgentClientMessage>();
  let expected = 0;
  const waiters: Array<(m: agent.AgentClientMessage) => void> = [];
  const queue: agent.AgentClientMessage[] = [];
  let runRequest: ((r: agent.AgentRunRequest) => void) | undefined;
  const runRequestArrived = new Promise<agent.AgentRunRequest>((r) => (runRequest = r));
  const deliver = (m: agent.AgentClientMessage): void => {
    const w = waiters.shift();
    if (w) w(m);
    else queue.push(m);
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      if (req.url === "/aiserver.v1.BidiService/BidiAppend") {
        const append = fromBinary(aiserver.BidiAppendRequestSchema, body);
        const seqno = Number(append.appendSeqno);
        seqnos.push(seqno);
        buffered.set(seqno, fromBinary(agent.AgentClientMessageSchema, Buffer.from(append.data, "hex")));
        for (let m = buffered.get(expected); m !== undefined; m = buffered.get(expected)) {
          buffered.delete(expected);
          expected++;
          if (m.message.case === "runRequest") runRequest?.(m.message.value);
          else deliver(m);
        }
        res.writeHead(200, { "content-type": "application/proto" }).end();
        return;
      }
      res.writeHead(200, { "content-type": "application/connect+proto" });
      void runRequestArrived.then((rr) =>
        script({
          runRequest: rr,
          seqnos,
          send: (m) => res.write(encodeEnvelope(toBinary(agent.AgentServerMessageSchema, m))),
          end: (json) => res.end(encodeEnvelope(Buffer.from(json), 0x02)),
          next: () => new Promise((r) => (queue.length > 0 ? r(queue.shift()!) : waiters.push(r))),
        }),
      );
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, seqnos, stop: () => new Promise((r) => server.close(() => r())) };
}

const msg = (init: MessageInitShape<typeof agent.AgentServerMessageSchema>): agent.AgentServerMessage => create(agent.AgentServerMessageSchema, init);
const kvSet = (id: number, data: Uint8Array): agent.AgentServerMessage =>
  msg({ message: { case: "kvServerMessage", value: { id, message: { case: "setBlobArgs", value: { blobId: blobIdOf(data), blobData: data } } } } });
const checkpoint = (roots: Uint8Array[]): agent.AgentServerMessage => msg({ message: { case: "conversationCheckpointUpdate", value: { rootPromptMessagesJson: roots } } });

let cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.reverse()) await c();
  cleanups = [];
});

describe("fake Cursor client", () => {
  it("sends the run request at seqno 0, ACKs KV sets with their id, answers execs and keeps the settled checkpoint", async () => {
    const blob = Buffer.from('{"role":"user","content":"hi"}');
    const server = await startScriptedServer(async (io) => {
      io.send(kvSet(7, blob));
      const ack = await io.next();
      expect(ack.message.case === "kvClientMessage" && ack.message.value.id).toBe(7);
      io.send(msg({ message: { case: "execServerMessage", value: { id: 3 } } }));
      const result = await io.next();
      const close = await io.next();
      expect(result.message.case === "execClientMessage" && result.message.value.id).toBe(3);
      expect(close.message.case === "execClientControlMessage" && close.message.value.message.case).toBe("streamClose");
      io.send(checkpoint([blobIdOf(blob)]));
      io.send(msg({ message: { case: "interactionUpdate", value: { message: { case: "textDelta", value: { text: "ok" } } } } }));
      io.end("{}");
    });
    cleanups.push(server.stop);
    const client = new FakeCursorClient({ transport: { baseUrl: server.url } });
    cleanups.push(() => client.close());
    const chat = client.conversation();
    const run = chat.send("hello", { modelId: "m", heartbeatMs: 0, onExec: (ctx) => ctx.reply({}) });
    const result = await run.finished;
    expect(result.end).toEqual({ kind: "ok", metadata: {} });
    expect(result.violations).toEqual([]);
    expect(result.text).toBe("ok");
    expect(server.seqnos.sort((a, b) => a - b)).toEqual([0, 1, 2, 3]);
    expect(chat.state.rootPromptMessagesJson.map((r) => Buffer.from(r).toString("hex"))).toEqual([Buffer.from(blobIdOf(blob)).toString("hex")]);
    expect(client.blobs.json(blobIdOf(blob))).toEqual({ role: "user", content: "hi" });
  });

  it("reports a checkpoint that references a blob before its ACK", async () => {
    const blob = Buffer.from('{"role":"system","content":"x"}');
    const server = await startScriptedServer(async (io) => {
      io.send(kvSet(0, blob));
      io.send(checkpoint([blobIdOf(blob)]));
      await io.next();
      io.end('{"error":{"code":"canceled","message":"stop"}}');
    });
    cleanups.push(server.stop);
    const client = new FakeCursorClient({ transport: { baseUrl: server.url } });
    cleanups.push(() => client.close());
    const result = await client.conversation().send("hello", { modelId: "m", heartbeatMs: 0, kv: { ackDelayMs: () => 50 } }).finished;
    expect(result.end).toMatchObject({ kind: "error", code: "canceled" });
    expect(result.violations.join("\n")).toMatch(/roots\[0\] references blob .* before its SET was ACKed/);
  });

  it("reports a blob whose id is not its SHA-256 and an EndStream that is not JSON", async () => {
    const server = await startScriptedServer(async (io) => {
      io.send(msg({ message: { case: "kvServerMessage", value: { id: 1, message: { case: "setBlobArgs", value: { blobId: new Uint8Array(32), blobData: Buffer.from("x") } } } } }));
      const reply = await io.next();
      expect(reply.message.case === "kvClientMessage" && reply.message.value.message.case === "setBlobResult" && reply.message.value.message.value.error?.message).toBeTruthy();
      io.end("");
    });
    cleanups.push(server.stop);
    const client = new FakeCursorClient({ transport: { baseUrl: server.url } });
    cleanups.push(() => client.close());
    const result = await client.conversation().send("hello", { modelId: "m", heartbeatMs: 0 }).finished;
    expect(result.violations.join("\n")).toMatch(/not the SHA-256/);
    // io.end("") writes an end-flagged envelope with an empty payload: not JSON.
    expect(result.end.kind).toBe("broken");
  });
});
