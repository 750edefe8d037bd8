import { afterEach, describe, expect, it } from "vitest";
import { connect } from "@nats-io/transport-node";
import { DiscardPolicy, jetstreamManager, RetentionPolicy } from "@nats-io/jetstream";
import { busNames } from "@byok/contracts";
import { createTestBus } from "@byok/test-support/infra";
import { ensureRunStreams, RUN_COMMANDS_MAX_BYTES, RUNS_MAX_BYTES } from "./run-streams.ts";

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
      // What JetStream keeps for runs is bounded in age and bytes.
      expect(runs.config).toMatchObject({ max_age: 3_600_000_000_000, max_bytes: RUNS_MAX_BYTES, discard: DiscardPolicy.New });
      expect(cmds.config).toMatchObject({ max_age: 3_600_000_000_000, max_bytes: RUN_COMMANDS_MAX_BYTES, discard: DiscardPolicy.Old });
    } finally {
      await nc.close();
    }
  });
});

describe("ensureRunStreams on streams of an older version", () => {
  const bus = createTestBus();
  afterEach(() => bus.cleanup());

  it("brings the limits to existing streams", async () => {
    const nc = await connect({ servers: bus.natsUrl });
    try {
      const names = busNames(bus.prefix);
      const jsm = await jetstreamManager(nc);
      await jsm.streams.add({ name: names.runsStream, subjects: [names.runStart], retention: RetentionPolicy.Workqueue });
      await jsm.streams.add({ name: names.commandsStream, subjects: [names.allRunCommands] });
      await ensureRunStreams(nc, names);
      expect((await jsm.streams.info(names.runsStream)).config.max_bytes).toBe(RUNS_MAX_BYTES);
      expect((await jsm.streams.info(names.commandsStream)).config.max_bytes).toBe(RUN_COMMANDS_MAX_BYTES);
    } finally {
      await nc.close();
    }
  });
});
