import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { jetstreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { busNames } from "@byok/contracts";
import { aiserver } from "@byok/cursor-protocol";
import { silentLogger } from "@byok/platform";
import { createTestBus, type TestBus } from "@byok/test-support/infra";
import { loadConfig } from "./config.ts";
import { runRequestMessage } from "./connect/testing/stub-session-factory.ts";
import { bidiAppend, callUnary, unaryError } from "./connect/testing/wire-client.ts";
import { startCursorAdapter, type CursorAdapter } from "./service.ts";

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function writeGatewayConfig(): string {
  const dir = mkdtempSync(join(tmpdir(), "adapter-config-"));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, "gateway.json");
  writeFileSync(
    path,
    JSON.stringify({
      providers: { main: { kind: "openai-chat", baseUrl: "http://127.0.0.1:9/v1", apiKeyEnv: "TEST_KEY" } },
      models: [{ id: "file-model", displayName: "File Model", provider: "main", upstreamModel: "m" }],
    }),
  );
  return path;
}

async function startWithBus(bus: TestBus): Promise<CursorAdapter> {
  const config = loadConfig({ PORT: "0", GATEWAY_CONFIG: writeGatewayConfig(), NATS_URL: bus.natsUrl, BUS_PREFIX: bus.prefix });
  const adapter = await startCursorAdapter(config, { log: silentLogger() });
  cleanups.push(() => adapter.stop());
  return adapter;
}

describe("startCursorAdapter", () => {
  it("serves the models of the gateway configuration file and sets up the run streams", async () => {
    const bus = createTestBus();
    cleanups.push(() => bus.cleanup());
    const adapter = await startWithBus(bus);

    const models = await callUnary(adapter.url, "/aiserver.v1.AiService/AvailableModels", aiserver.AvailableModelsRequestSchema, {}, aiserver.AvailableModelsResponseSchema);
    expect(models.modelNames).toEqual(["file-model"]);

    const nc = await connect({ servers: bus.natsUrl });
    try {
      const jsm = await jetstreamManager(nc);
      const names = busNames(bus.prefix);
      expect((await jsm.streams.info(names.runsStream)).config.subjects).toEqual([names.runStart]);
    } finally {
      await nc.close();
    }
  });

  it("validates run requests with the real session factory", async () => {
    const bus = createTestBus();
    cleanups.push(() => bus.cleanup());
    const adapter = await startWithBus(bus);
    const result = await bidiAppend(adapter.url, "req-service-no-model", 0, runRequestMessage(""));
    expect(result.status).toBe(400);
    expect(unaryError(result).code).toBe("invalid_argument");
  });
});
