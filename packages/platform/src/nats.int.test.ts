/**
 * A service's NATS connection writes what one pass of the event loop sends
 * in one socket write (writeTogetherPerTick), in order, and still delivers
 * every message and answers every request.
 */
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NATS_URL, waitFor } from "@byok/test-support/infra";
import { countSocketWrites } from "@byok/test-support/socket-writes";
import { connectNats, type NatsConnection } from "./nats.ts";
import { silentLogger } from "./logger.ts";

const requireCjs = createRequire(import.meta.url);

describe("a service's NATS connection", () => {
  let sender: NatsConnection;
  let receiver: NatsConnection;
  const subject = `nats-writes-${process.pid}-${Date.now()}`;

  beforeAll(async () => {
    sender = await connectNats(NATS_URL, "test-sender", silentLogger());
    receiver = await connectNats(NATS_URL, "test-receiver", silentLogger());
  });
  afterAll(async () => {
    await sender.close();
    await receiver.close();
  });

  it("sends what one pass of the event loop publishes in one write, in order", async () => {
    const got: string[] = [];
    const sub = receiver.subscribe(`${subject}.pub`, { callback: (_err, msg) => void got.push(msg.string()) });
    await receiver.flush();
    const writes = await countSocketWrites(async () => {
      // Publishes in successive promise jobs: each used to take a write of its own.
      await new Promise<void>((resolve) => {
        setImmediate(() => {
          void (async () => {
            sender.publish(`${subject}.pub`, "1");
            await Promise.resolve();
            sender.publish(`${subject}.pub`, "2");
            await Promise.resolve();
            await Promise.resolve();
            sender.publish(`${subject}.pub`, "3");
            resolve();
          })();
        });
      });
      await new Promise<void>((resolve) => setImmediate(resolve));
    });
    expect(writes).toBe(1);
    await sender.flush();
    await receiver.flush();
    expect(got).toEqual(["1", "2", "3"]);
    sub.unsubscribe();
  });

  it("writes what is queued before a close() in the same pass", async () => {
    const closing = await connectNats(NATS_URL, "test-closing", silentLogger());
    const got: string[] = [];
    const sub = receiver.subscribe(`${subject}.last`, { callback: (_err, msg) => void got.push(msg.string()) });
    await receiver.flush();
    closing.publish(`${subject}.last`, "before close");
    await closing.close();
    await receiver.flush();
    await waitFor(() => got.length === 1, "the message published right before close()", 5_000);
    expect(got).toEqual(["before close"]);
    sub.unsubscribe();
  });

  it("answers requests and flushes", async () => {
    const sub = receiver.subscribe(`${subject}.req`, { callback: (_err, msg) => void msg.respond(`re:${msg.string()}`) });
    await receiver.flush();
    const replies = await Promise.all([1, 2, 3].map(async (i) => (await sender.request(`${subject}.req`, String(i), { timeout: 5_000 })).string()));
    expect(replies).toEqual(["re:1", "re:2", "re:3"]);
    await sender.flush();
    sub.unsubscribe();
  });

  it("ends an answered request without building an error, and a request that gets no answer as before", async () => {
    const sub = receiver.subscribe(`${subject}.quiet`, { callback: (_err, msg) => void msg.respond("ok") });
    await receiver.flush();
    // Count the client's RequestErrors: request.js reads the class off its errors module at each use.
    const errors = requireCjs(join(dirname(requireCjs.resolve("@nats-io/nats-core/internal")), "errors.js")) as { RequestError: new (...args: never[]) => Error };
    const Original = errors.RequestError;
    let built = 0;
    errors.RequestError = class extends Original {
      constructor(...args: never[]) {
        super(...args);
        built += 1;
      }
    };
    try {
      for (let i = 0; i < 20; i++) expect((await sender.request(`${subject}.quiet`, "?", { timeout: 5_000 })).string()).toBe("ok");
    } finally {
      errors.RequestError = Original;
    }
    expect(built).toBe(0);
    await expect(sender.request(`${subject}.nobody`, "?", { timeout: 5_000 })).rejects.toThrow(/no responders/i);
    const silent = receiver.subscribe(`${subject}.silent`, { callback: () => undefined });
    await receiver.flush();
    await expect(sender.request(`${subject}.silent`, "?", { timeout: 50 })).rejects.toThrow(/timeout/i);
    silent.unsubscribe();
    sub.unsubscribe();
  });
});
