import { afterEach, describe, expect, it } from "vitest";
import { randomBytes } from "node:crypto";
import { gunzipSync } from "node:zlib";
import { create } from "@bufbuild/protobuf";
import { agent, aiserver } from "@byok/cursor-protocol";
import { waitFor } from "@byok/test-support/infra";
import type { AdapterServer } from "./http-server.ts";
import { startStubAdapterServer } from "./testing/stub-adapter-server.ts";
import { runRequestMessage, textDeltaMessage, type StubSessionFactory } from "./testing/stub-session-factory.ts";
import { FLAG_COMPRESSED, FLAG_END_STREAM, bidiAppend, decodeServerMessage, hex, isHeartbeat, openRunSse as openRunSseRaw, unaryError } from "./testing/wire-client.ts";

const REQUEST_ID = "00000000-0000-4000-8000-000000000001";
const HEARTBEAT_HEX = "00000000040a026a00";
const END_OK_HEX = "02000000027b7d";

let server: AdapterServer | undefined;
let factory: StubSessionFactory;

async function start(overrides: { heartbeatMs?: number; runWaitMs?: number } = {}): Promise<string> {
  const started = await startStubAdapterServer(overrides);
  ({ server, factory } = started);
  return started.server.url;
}

afterEach(async () => {
  await server?.stop();
  server = undefined;
});

/**
 * Cursor's request shape is written by the direct path (run-sse-direct.ts); a connect-timeout-ms
 * leaves the request to connect-node. Both must put the same bytes on the wire.
 */
const PATHS = [
  { path: "direct", headers: {} },
  { path: "connect-node", headers: { "connect-timeout-ms": "600000" } },
] as const;

describe.each(PATHS)("RunSSE ($path)", ({ headers: pathHeaders }) => {
  const openRunSse = (url: string, requestId: string, options: Parameters<typeof openRunSseRaw>[2] = {}) =>
    openRunSseRaw(url, requestId, { ...options, headers: { ...pathHeaders, ...options.headers } });

  it("answers the §13 request bytes with a heartbeat first and an exact success EndStream", async () => {
    const url = await start();
    const body = Buffer.from("00000000260a2430303030303030302d303030302d343030302d383030302d303030303030303030303031", "hex");
    const sse = await openRunSse(url, REQUEST_ID, { rawBody: body });
    expect(sse.status).toBe(200);
    expect(hex((await sse.next()).raw)).toBe(HEARTBEAT_HEX);

    expect((await bidiAppend(url, REQUEST_ID, 0, runRequestMessage("byok-model"))).status).toBe(200);
    const run = await factory.opened(REQUEST_ID);
    run.context.stream.send(textDeltaMessage("Hi"));
    run.context.stream.end({ kind: "ok" });

    expect(hex((await sse.next()).raw)).toBe("00000000080a060a040a024869");
    expect(hex((await sse.next()).raw)).toBe(END_OK_HEX);
    expect(await sse.bodyEnded()).toBe(true);
    expect(hex(Uint8Array.from(sse.received))).toBe(HEARTBEAT_HEX + "00000000080a060a040a024869" + END_OK_HEX);
  });

  it("writes an error end as the §13 provider-error EndStream, details base64 without padding", async () => {
    const url = await start();
    await bidiAppend(url, REQUEST_ID, 0, runRequestMessage("byok-model"));
    const run = await factory.opened(REQUEST_ID);
    const details = create(aiserver.ErrorDetailsSchema, {
      error: aiserver.ErrorDetails_Error.PROVIDER_ERROR,
      details: { title: "Server Error", detail: "boom", isRetryable: true, showRequestId: true, shouldShowImmediateError: false },
      isExpected: false,
    });
    run.context.stream.end({ kind: "error", code: "unavailable", message: "boom", details });

    const sse = await openRunSse(url, REQUEST_ID);
    const frames = await sse.readToEnd();
    const json =
      '{"error":{"code":"unavailable","message":"boom","details":[{"type":"aiserver.v1.ErrorDetails","value":"CDkSGgoMU2VydmVyIEVycm9yEgRib29tIAEoATAAGAA"}]}}';
    expect(json.length).toBe(0x97);
    expect(frames.map((f) => hex(f.raw))).toEqual([HEARTBEAT_HEX, "0200000097" + Buffer.from(json).toString("hex")]);
  });

  it("holds a RunSSE that arrives before the first append and relays the run once it starts", async () => {
    const url = await start();
    const sse = await openRunSse(url, "req-sse-first");
    expect(isHeartbeat(decodeServerMessage(await sse.next()))).toBe(true);
    expect(factory.runs.size).toBe(0);

    await bidiAppend(url, "req-sse-first", 0, runRequestMessage("byok-model"));
    const run = await factory.opened("req-sse-first");
    run.context.stream.send(textDeltaMessage("one"));
    run.context.stream.send(textDeltaMessage("two"));
    run.context.stream.end({ kind: "ok" });

    const texts = (await sse.readToEnd()).filter((f) => f.flags === 0).map((f) => textOf(decodeServerMessage(f)));
    expect(texts).toEqual(["one", "two"]);
  });

  it("buffers frames written before the RunSSE attaches and delivers them after its heartbeat", async () => {
    const url = await start();
    await bidiAppend(url, "req-append-first", 0, runRequestMessage("byok-model"));
    const run = await factory.opened("req-append-first");
    run.context.stream.send(textDeltaMessage("early"));

    const sse = await openRunSse(url, "req-append-first");
    expect(isHeartbeat(decodeServerMessage(await sse.next()))).toBe(true);
    expect(textOf(decodeServerMessage(await sse.next()))).toBe("early");
    run.context.stream.send(textDeltaMessage("late"));
    expect(textOf(decodeServerMessage(await sse.next()))).toBe("late");
  });

  it("sends a heartbeat whenever the stream is idle for HEARTBEAT_MS", async () => {
    const url = await start({ heartbeatMs: 40 });
    await bidiAppend(url, "req-idle", 0, runRequestMessage("byok-model"));
    const run = await factory.opened("req-idle");
    const sse = await openRunSse(url, "req-idle");
    expect(isHeartbeat(decodeServerMessage(await sse.next()))).toBe(true);
    expect(isHeartbeat(decodeServerMessage(await sse.next()))).toBe(true);
    run.context.stream.send(textDeltaMessage("x"));
    expect(textOf(decodeServerMessage(await sse.nextNonHeartbeat()))).toBe("x");
    expect(isHeartbeat(decodeServerMessage(await sse.next()))).toBe(true);
  });

  it("writes exactly one EndStream however often the session ends the stream", async () => {
    const url = await start();
    await bidiAppend(url, "req-end-twice", 0, runRequestMessage("byok-model"));
    const run = await factory.opened("req-end-twice");
    const sse = await openRunSse(url, "req-end-twice");
    run.context.stream.end({ kind: "ok" });
    run.context.stream.end({ kind: "error", code: "internal", message: "second end" });
    run.context.stream.send(textDeltaMessage("after end"));

    const frames = await sse.readToEnd();
    expect(frames.filter((f) => f.flags & FLAG_END_STREAM).map((f) => hex(f.raw))).toEqual([END_OK_HEX]);
    expect(frames.some((f) => f.flags === 0 && textOf(decodeServerMessage(f)) === "after end")).toBe(false);
    expect(await sse.bodyEnded()).toBe(true);
  });

  it("reports a client that disconnects before the EndStream to the session", async () => {
    const url = await start();
    await bidiAppend(url, "req-gone", 0, runRequestMessage("byok-model"));
    const run = await factory.opened("req-gone");
    const sse = await openRunSse(url, "req-gone");
    await sse.next();
    sse.disconnect();
    await waitFor(() => run.disconnects === 1, "session told about the disconnect");
    // A later RunSSE for the same request id is refused instead of silently replaying.
    const again = await openRunSse(url, "req-gone");
    expect(endError(await again.readToEnd()).code).toBe("failed_precondition");
    expect(run.disconnects).toBe(1);
  });

  it("refuses a second concurrent RunSSE for one request id", async () => {
    const url = await start();
    const first = await openRunSse(url, "req-twice");
    await first.next();
    const second = await openRunSse(url, "req-twice");
    expect(endError(await second.readToEnd()).code).toBe("failed_precondition");
    await bidiAppend(url, "req-twice", 0, runRequestMessage("byok-model"));
    (await factory.opened("req-twice")).context.stream.end({ kind: "ok" });
    expect(hex((await first.nextNonHeartbeat()).raw)).toBe(END_OK_HEX);
  });

  it("ends a waiting RunSSE with an error when no run_request arrives in time", async () => {
    const url = await start({ runWaitMs: 150 });
    const sse = await openRunSse(url, "req-never");
    const error = endError(await sse.readToEnd());
    expect(error.code).toBe("deadline_exceeded");
    expect(factory.runs.size).toBe(0);
  });

  it("ends a waiting RunSSE with the rejection of an invalid run_request", async () => {
    const url = await start();
    const sse = await openRunSse(url, "req-no-model");
    await sse.next();
    const append = await bidiAppend(url, "req-no-model", 0, runRequestMessage(""));
    expect(append.status).toBe(400);
    expect(unaryError(append)).toEqual({ code: "invalid_argument", message: "no model" });
    expect(endError(await sse.readToEnd())).toEqual({ code: "invalid_argument", message: "no model" });
  });

  it("refuses a RunSSE without a request id", async () => {
    const url = await start();
    const sse = await openRunSse(url, "");
    expect(endError(await sse.readToEnd()).code).toBe("invalid_argument");
  });
});

describe("RunSSE on both paths", () => {
  /** One run's RunSSE through `headers`: its response headers and frames (payloads decompressed). */
  async function oneRun(url: string, requestId: string, headers: Record<string, string>) {
    const sse = await openRunSseRaw(url, requestId, { headers });
    await bidiAppend(url, requestId, 0, runRequestMessage("byok-model"));
    const run = await factory.opened(requestId);
    run.context.stream.send(textDeltaMessage("small"));
    run.context.stream.send(textDeltaMessage("x".repeat(3000)));
    run.context.stream.end({ kind: "error", code: "unavailable", message: "y".repeat(1500) });
    const frames = await sse.readToEnd();
    return {
      status: sse.status,
      headers: ["content-type", "connect-content-encoding", "cache-control"].map((name) => sse.headers.get(name)),
      frames: frames.map((f) => ({ flags: f.flags, payload: hex(f.flags & FLAG_COMPRESSED ? gunzipSync(f.payload) : f.payload) })),
    };
  }

  it.each([{ accept: "gzip" }, { accept: "identity" }, { accept: "" }])("answers Cursor's shape (accept $accept) as connect-node does", async ({ accept }) => {
    const url = await start();
    const headers: Record<string, string> = accept === "" ? {} : { "connect-accept-encoding": accept };
    const direct = await oneRun(url, "req-direct", headers);
    const viaConnect = await oneRun(url, "req-connect", { ...headers, "connect-timeout-ms": "600000" });
    expect(direct).toEqual(viaConnect);
    expect(direct.headers).toEqual(["application/connect+proto", accept === "gzip" ? "gzip" : null, "no-cache"]);
    // Gzip from 1 KiB on: the heartbeat and the small frame stay plain, the large frame and the long EndStream are compressed.
    expect(direct.frames.map((f) => f.flags)).toEqual(accept === "gzip" ? [0, 0, 1, 3] : [0, 0, 0, 2]);
  });

  it("sends checkpoints uncompressed on Cursor's path: their root ids do not shrink", async () => {
    const url = await start();
    const sse = await openRunSseRaw(url, "req-checkpoint", { headers: { "connect-accept-encoding": "gzip" } });
    await bidiAppend(url, "req-checkpoint", 0, runRequestMessage("byok-model"));
    const run = await factory.opened("req-checkpoint");
    const roots = Array.from({ length: 100 }, () => new Uint8Array(randomBytes(32)));
    const checkpoint = create(agent.AgentServerMessageSchema, { message: { case: "conversationCheckpointUpdate", value: { rootPromptMessagesJson: roots } } });
    run.context.stream.send(checkpoint);
    run.context.stream.send(textDeltaMessage("x".repeat(3000)));
    run.context.stream.end({ kind: "ok" });
    const frames = (await sse.readToEnd()).filter((f) => (f.flags & FLAG_END_STREAM) === 0 && !(f.flags === 0 && isHeartbeat(decodeServerMessage(f))));
    expect(frames.map((f) => f.flags)).toEqual([0, FLAG_COMPRESSED]);
    const decoded = decodeServerMessage(frames[0]!);
    expect(decoded.message.case === "conversationCheckpointUpdate" && decoded.message.value.rootPromptMessagesJson.map((r) => hex(r))).toEqual(roots.map((r) => hex(r)));
  });

  it.each([
    { body: "01000000020a00", what: "a compressed request envelope" },
    { body: "00000000050a00", what: "a truncated request envelope" },
    { body: "", what: "no request envelope" },
  ])("ends $what with an error EndStream", async ({ body }) => {
    const url = await start();
    const direct = await openRunSseRaw(url, "req-bad", { rawBody: Buffer.from(body, "hex") });
    expect(direct.status).toBe(200);
    const error = endError(await direct.readToEnd());
    expect(error.code).toBe("invalid_argument");
  });
});

function textOf(message: ReturnType<typeof decodeServerMessage>): string | undefined {
  if (message.message.case !== "interactionUpdate") return undefined;
  const update = message.message.value.message;
  return update.case === "textDelta" ? update.value.text : undefined;
}

function endError(frames: Array<{ flags: number; payload: Uint8Array }>): { code: string; message?: string } {
  const last = frames[frames.length - 1];
  if (!last || !(last.flags & FLAG_END_STREAM)) throw new Error("no EndStream");
  const json = JSON.parse(Buffer.from(last.payload).toString("utf8")) as { error?: { code: string; message?: string } };
  if (!json.error) throw new Error("EndStream without error");
  return json.error;
}
