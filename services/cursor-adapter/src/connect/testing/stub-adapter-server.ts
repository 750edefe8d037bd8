/**
 * The real HTTP server of the adapter on a free loopback port, with a
 * StubSessionFactory behind it, for the transport and model-list tests.
 * Timers default to a minute (nothing fires unless a test shortens it).
 */
import type { ModelConfig } from "@byok/platform";
import { Registry, silentLogger } from "@byok/platform";
import { createCursorAdapterMetrics } from "../../metrics.ts";
import { everyModel, type MemberModels } from "../../models/member-models.ts";
import { startAdapterServer, type AdapterServer } from "../http-server.ts";
import { StubSessionFactory } from "./stub-session-factory.ts";

export interface StubAdapterServerOptions {
  models?: readonly ModelConfig[];
  /** Per-member model lists (default: everyone sees `models`). */
  memberModels?: MemberModels;
  heartbeatMs?: number;
  runWaitMs?: number;
}

export async function startStubAdapterServer(options: StubAdapterServerOptions = {}): Promise<{ server: AdapterServer; factory: StubSessionFactory }> {
  const factory = new StubSessionFactory();
  const server = await startAdapterServer({
    host: "127.0.0.1",
    port: 0,
    factory,
    memberModels: options.memberModels ?? everyModel(options.models ?? []),
    heartbeatMs: options.heartbeatMs ?? 60_000,
    runWaitMs: options.runWaitMs ?? 60_000,
    endGraceMs: 60_000,
    metrics: createCursorAdapterMetrics(new Registry(), { activeRuns: () => 0, openRunSseStreams: () => 0 }),
    log: silentLogger(),
  });
  return { server, factory };
}
