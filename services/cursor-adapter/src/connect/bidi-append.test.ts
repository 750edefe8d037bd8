import { afterEach, describe, expect, it } from "vitest";
import { create } from "@bufbuild/protobuf";
import { agent } from "@byok/cursor-protocol";
import type { AdapterServer } from "./http-server.ts";
import { startStubAdapterServer } from "./testing/stub-adapter-server.ts";
import { clientHeartbeatMessage, kvAckMessage, kvIdOf, runRequestMessage, type StubSessionFactory } from "./testing/stub-session-factory.ts";
import { bidiAppend, bidiAppendBody, hex, postUnary, unaryError } from "./testing/wire-client.ts";

let server: AdapterServer | undefined;
let factory: StubSessionFactory;

async function start(runWaitMs?: number): Promise<string> {
  const started = await startStubAdapterServer({ runWaitMs });
  ({ server, factory } = started);
  return started.server.url;
}

afterEach(async () => {
  await server?.stop();
  server = undefined;
});

describe("BidiAppend", () => {
  it("answers 200 with an empty application/proto body and opens the run with its context", async () => {
    const url = await start();
    const result = await bidiAppend(url, "req-open", 0, runRequestMessage("byok-model"), {
      headers: { "x-byok-member-id": "member-7", "x-parent-request-id": "parent-1", authorization: "Bearer secret-token" },
    });
    expect(result.status).toBe(200);
    expect(result.contentType).toBe("application/proto");
    expect(result.body.length).toBe(0);
    const run = await factory.opened("req-open");
    expect(run.context.memberId).toBe("member-7");
    expect(run.context.runRequest.requestedModel?.modelId).toBe("byok-model");
    expect(run.context.headers["x-parent-request-id"]).toBe("parent-1");
    expect(run.context.headers["authorization"]).toBeUndefined();
  });

  it("uses the member id `local` when no proxy set one", async () => {
    const url = await start();
    await bidiAppend(url, "req-local", 0, runRequestMessage("byok-model"));
    expect((await factory.opened("req-local")).context.memberId).toBe("local");
  });

  it("delivers reordered and duplicated appends once each, in seqno order", async () => {
    const url = await start();
    // Appends 2 and 1 arrive before the run_request: they wait for it.
    const early = [bidiAppend(url, "req-order", 2, kvAckMessage(2)), bidiAppend(url, "req-order", 1, kvAckMessage(1))];
    expect((await bidiAppend(url, "req-order", 0, runRequestMessage("byok-model"))).status).toBe(200);
    expect((await Promise.all(early)).map((r) => r.status)).toEqual([200, 200]);
    const run = await factory.opened("req-order");

    const later = await Promise.all([
      bidiAppend(url, "req-order", 5, kvAckMessage(5)),
      bidiAppend(url, "req-order", 4, kvAckMessage(4)),
      bidiAppend(url, "req-order", 1, kvAckMessage(1)),
      bidiAppend(url, "req-order", 5, kvAckMessage(5)),
      bidiAppend(url, "req-order", 0, runRequestMessage("byok-model")),
    ]);
    expect(later.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    expect(run.delivered.map(kvIdOf)).toEqual([1, 2]);

    expect((await bidiAppend(url, "req-order", 3, kvAckMessage(3))).status).toBe(200);
    expect(run.delivered.map(kvIdOf)).toEqual([1, 2, 3, 4, 5]);
    expect(factory.runs.size).toBe(1);
  });

  it("accepts a gzip-compressed body", async () => {
    const url = await start();
    const result = await bidiAppend(url, "req-gzip", 0, runRequestMessage("byok-model"), { gzip: true });
    expect(result.status).toBe(200);
    expect((await factory.opened("req-gzip")).context.runRequest.conversationId).toBe("conv-1");
  });

  it("decodes the §13 client_heartbeat append body", async () => {
    const url = await start();
    await bidiAppend(url, "00000000-0000-4000-8000-000000000001", 0, runRequestMessage("byok-model"));
    const vector = Buffer.from(
      "0a043361303012260a2430303030303030302d303030302d343030302d383030302d3030303030303030303030311801",
      "hex",
    );
    expect(hex(bidiAppendBody("00000000-0000-4000-8000-000000000001", 1, clientHeartbeatMessage()))).toBe(vector.toString("hex"));
    const result = await postUnary(url, "/aiserver.v1.BidiService/BidiAppend", vector);
    expect(result.status).toBe(200);
    const run = await factory.opened("00000000-0000-4000-8000-000000000001");
    expect(run.delivered.map((m) => m.message.case)).toEqual(["clientHeartbeat"]);
  });

  it("rejects bad input with invalid_argument and keeps serving", async () => {
    const url = await start();
    const cases: Array<[string, Promise<Awaited<ReturnType<typeof bidiAppend>>>]> = [
      ["non-hex", bidiAppend(url, "req-bad", 0, undefined, { rawData: "zz" })],
      ["odd length", bidiAppend(url, "req-bad", 0, undefined, { rawData: "0a0" })],
      ["undecodable protobuf", bidiAppend(url, "req-bad", 0, undefined, { rawData: "0aff" })],
      // Field 101 (unknown) only: decodes, but no message is set (e.g. a speech-to-text payload).
      ["no oneof set", bidiAppend(url, "req-bad", 0, undefined, { rawData: "a80601" })],
      ["empty data", bidiAppend(url, "req-bad", 0, undefined)],
      ["missing request id", bidiAppend(url, "", 0, runRequestMessage("byok-model"))],
      ["no model", bidiAppend(url, "req-bad", 0, runRequestMessage(""))],
      ["seqno 0 is not a run_request", bidiAppend(url, "req-bad", 0, clientHeartbeatMessage())],
    ];
    for (const [what, pending] of cases) {
      const result = await pending;
      expect(result.status, what).toBe(400);
      expect(unaryError(result).code, what).toBe("invalid_argument");
    }
    // A body that is not a BidiAppendRequest at all is refused by connect-es itself,
    // which reports binary parse failures as `internal`.
    const garbage = await postUnary(url, "/aiserver.v1.BidiService/BidiAppend", Uint8Array.from([0xff, 0xff, 0xff]));
    expect(garbage.status).toBe(500);
    expect(unaryError(garbage).code).toBe("internal");
    expect(factory.runs.size).toBe(0);

    expect((await bidiAppend(url, "req-good", 0, runRequestMessage("byok-model"))).status).toBe(200);
    expect((await factory.opened("req-good")).context.requestId).toBe("req-good");
  });

  it("acknowledges a prewarm_request without starting a run", async () => {
    const url = await start();
    const prewarm = create(agent.AgentClientMessageSchema, { message: { case: "prewarmRequest", value: {} } });
    expect((await bidiAppend(url, "req-prewarm", 0, prewarm)).status).toBe(200);
    expect(factory.runs.size).toBe(0);
  });

  it("fails appends that waited for a run_request that never came", async () => {
    const url = await start(150);
    const result = await bidiAppend(url, "req-orphan", 3, kvAckMessage(3));
    expect(result.status).toBe(504);
    expect(unaryError(result).code).toBe("deadline_exceeded");
    expect(factory.runs.size).toBe(0);
  });

  it("fails appends waiting on a run_request that was rejected", async () => {
    const url = await start();
    const waiting = bidiAppend(url, "req-rejected", 1, kvAckMessage(1));
    expect((await bidiAppend(url, "req-rejected", 0, runRequestMessage(""))).status).toBe(400);
    const result = await waiting;
    expect(unaryError(result).code).toBe("failed_precondition");
  });

  it("refuses appends of another member to a run", async () => {
    const url = await start();
    await bidiAppend(url, "req-owned", 0, runRequestMessage("byok-model"), { headers: { "x-byok-member-id": "alice" } });
    const run = await factory.opened("req-owned");
    const result = await bidiAppend(url, "req-owned", 1, kvAckMessage(1), { headers: { "x-byok-member-id": "bob" } });
    expect(result.status).toBe(403);
    expect(unaryError(result).code).toBe("permission_denied");
    expect(run.delivered).toEqual([]);
  });
});
