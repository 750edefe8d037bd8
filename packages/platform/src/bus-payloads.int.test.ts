/**
 * Payloads larger than one NATS message through the real payload bucket: a
 * request and its reply both over the server's max_payload travel by
 * reference and arrive byte for byte, read payloads are removed, a stream's
 * reader keeps them, and one that is gone fails with its kind. Small payloads
 * never touch the bucket.
 */
import { afterEach, describe, expect, it } from "vitest";
import { randomBytes } from "node:crypto";
import { BytesValueSchema } from "@bufbuild/protobuf/wkt";
import { DiscardPolicy, jetstreamManager } from "@nats-io/jetstream";
import { Objm } from "@nats-io/obj";
import { busNames } from "@byok/contracts";
import { createTestBus } from "@byok/test-support/infra";
import { BusPayloads, PAYLOAD_REF_HEADER, PAYLOAD_TTL_MS, PAYLOADS_MAX_BYTES, PayloadFailure } from "./bus-payloads.ts";
import { busRequest, serveRequests } from "./bus-rpc.ts";
import { silentLogger } from "./logger.ts";
import { connectNats } from "./nats.ts";
import { ensureRunStreams } from "./run-streams.ts";

async function objectsIn(nc: Parameters<typeof jetstreamManager>[0], bucket: string): Promise<number> {
  const store = await new Objm(nc).open(bucket);
  return (await store.list()).length;
}

describe("bus payloads over the server's message limit", () => {
  const bus = createTestBus();
  afterEach(() => bus.cleanup());

  it("a request and a reply each larger than max_payload arrive whole; read payloads are removed", async () => {
    const names = busNames(bus.prefix);
    const client = await connectNats(bus.natsUrl, "client", silentLogger());
    const server = await connectNats(bus.natsUrl, "server", silentLogger());
    try {
      const maxPayload = client.info!.max_payload;
      const sent = randomBytes(maxPayload + 300_000);
      const answer = randomBytes(maxPayload * 2);
      let received: Uint8Array | undefined;
      serveRequests(
        server,
        `${bus.prefix}.echo`,
        BytesValueSchema,
        BytesValueSchema,
        async (request) => {
          received = request.value;
          return { value: answer };
        },
        () => ({ value: new Uint8Array(0) }),
        { log: silentLogger(), payloads: BusPayloads.of(server, names) },
      );
      await server.flush();
      const reply = await busRequest(client, `${bus.prefix}.echo`, BytesValueSchema, { value: sent }, BytesValueSchema, { timeoutMs: 10_000, payloads: BusPayloads.of(client, names) });
      expect(Buffer.from(received!).equals(sent)).toBe(true);
      expect(Buffer.from(reply.value).equals(answer)).toBe(true);
      // Both were read once and removed (the removal follows the read without being awaited).
      await expect.poll(() => objectsIn(client, names.payloadsBucket), { timeout: 10_000 }).toBe(0);
    } finally {
      await client.close();
      await server.close();
    }
  });

  it("sends a payload that fits inline, without creating the bucket", async () => {
    const names = busNames(bus.prefix);
    const nc = await connectNats(bus.natsUrl, "small", silentLogger());
    try {
      const data = randomBytes(1000);
      const outgoing = await BusPayloads.of(nc, names).outgoing(data);
      expect(outgoing.data).toBe(data);
      expect(outgoing.headers).toBeUndefined();
      const jsm = await jetstreamManager(nc);
      await expect(jsm.streams.info(`OBJ_${names.payloadsBucket}`)).rejects.toThrow(/not found/);
    } finally {
      await nc.close();
    }
  });

  it("a stream's reader keeps the payload; one that is gone fails as missing", async () => {
    const names = busNames(bus.prefix);
    const nc = await connectNats(bus.natsUrl, "keep", silentLogger());
    try {
      const payloads = new BusPayloads(nc, names, { inlineLimit: 100 });
      const data = randomBytes(5000);
      const outgoing = await payloads.outgoing(data);
      expect(outgoing.data).toHaveLength(0);
      expect(outgoing.headers?.get(PAYLOAD_REF_HEADER)).not.toBe("");
      const msg = { data: outgoing.data, headers: outgoing.headers };
      expect(Buffer.from(await payloads.incoming(msg, { keep: true })).equals(data)).toBe(true);
      expect(Buffer.from(await payloads.incoming(msg)).equals(data)).toBe(true);
      await expect.poll(() => objectsIn(nc, names.payloadsBucket), { timeout: 10_000 }).toBe(0);
      const failure = await payloads.incoming(msg).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(PayloadFailure);
      expect((failure as PayloadFailure).kind).toBe("missing");
    } finally {
      await nc.close();
    }
  });

  it("is created by the first large payload, with the run streams' replicas, an hour's age limit and a bound that refuses new payloads", async () => {
    const names = busNames(bus.prefix);
    const nc = await connectNats(bus.natsUrl, "ensure", silentLogger());
    try {
      const jsm = await jetstreamManager(nc);
      await ensureRunStreams(nc, names, { replicas: 1 });
      // A deployment whose payloads always fit never has the bucket.
      await expect(jsm.streams.info(`OBJ_${names.payloadsBucket}`)).rejects.toThrow(/not found/);
      const payloads = BusPayloads.of(nc, names);
      const sent = randomBytes(nc.info!.max_payload + 1);
      const outgoing = await payloads.outgoing(sent);
      const config = (await jsm.streams.info(`OBJ_${names.payloadsBucket}`)).config;
      expect(config).toMatchObject({ num_replicas: 1, max_age: PAYLOAD_TTL_MS * 1_000_000, max_bytes: PAYLOADS_MAX_BYTES, discard: DiscardPolicy.New });
      // Another process (its own connection) finds it as it is.
      const other = await connectNats(bus.natsUrl, "other", silentLogger());
      try {
        expect(Buffer.from(await BusPayloads.of(other, names).incoming(outgoing)).equals(sent)).toBe(true);
      } finally {
        await other.close();
      }
    } finally {
      await nc.close();
    }
  });
});
