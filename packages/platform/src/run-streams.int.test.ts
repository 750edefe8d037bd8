import { afterEach, describe, expect, it } from "vitest";
import { connect } from "@nats-io/transport-node";
import { jetstreamManager, RetentionPolicy } from "@nats-io/jetstream";
import { busNames } from "@byok/contracts";
import { createTestBus } from "@byok/test-support/infra";
import { ensureRunStreams } from "./run-streams.ts";

describe("ensureRunStreams", () => {
  const bus = createTestBus();
  afterEach(() => bus.cleanup());

  it("creates the work queue and command streams once, and is idempotent when called concurrently", async () => {
    const nc = await connect({ servers: bus.natsUrl });
    try {
      const names = busNames(bus.prefix);
      await Promise.all([ensureRunStreams(nc, names), ensureRunStreams(nc, names)]);
      await ensureRunStreams(nc, names);
      const jsm = await jetstreamManager(nc);
      const runs = await jsm.streams.info(names.runsStream);
      expect(runs.config.retention).toBe(RetentionPolicy.Workqueue);
      expect(runs.config.subjects).toEqual([names.runStart]);
      const cmds = await jsm.streams.info(names.commandsStream);
      expect(cmds.config.subjects).toEqual([names.allRunCommands]);
    } finally {
      await nc.close();
    }
  });
});
