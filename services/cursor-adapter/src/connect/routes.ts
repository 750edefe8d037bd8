/**
 * Every Connect route the adapter serves, bound to the generated service
 * descriptors (the paths are `/<package>.<Service>/<Method>`).
 */
import type { ConnectRouter } from "@connectrpc/connect";
import { agent, aiserver } from "@byok/cursor-protocol";
import type { Logger, ModelConfig } from "@byok/platform";
import {
  availableModelsResponse,
  defaultModelForCliResponse,
  defaultModelNudgeDataResponse,
  defaultModelResponse,
  usableModelsResponse,
} from "../models/model-catalog.ts";
import type { CursorAdapterMetrics } from "../metrics.ts";
import type { RunRegistry } from "../transport/run-registry.ts";
import { createBidiAppendHandler } from "./bidi-append-handler.ts";
import { createRunSseHandler } from "./run-sse-handler.ts";
import { serverConfigResponse } from "./server-config.ts";

export interface RouteDeps {
  registry: RunRegistry;
  models: readonly ModelConfig[];
  heartbeatMs: number;
  metrics: CursorAdapterMetrics;
  log: Logger;
}

export function registerRoutes(router: ConnectRouter, deps: RouteDeps): void {
  const { models } = deps;
  router.service(agent.AgentService, {
    runSSE: createRunSseHandler(deps),
    getUsableModels: () => usableModelsResponse(models),
    getDefaultModelForCli: () => defaultModelForCliResponse(models),
  });
  router.service(aiserver.BidiService, {
    bidiAppend: createBidiAppendHandler(deps),
  });
  router.service(aiserver.AiService, {
    availableModels: (request) => availableModelsResponse(models, request),
    getServerConfig: () => serverConfigResponse(),
    getUsableModels: () => usableModelsResponse(models),
    getDefaultModelForCli: () => defaultModelForCliResponse(models),
    getDefaultModel: () => defaultModelResponse(models),
    getDefaultModelNudgeData: () => defaultModelNudgeDataResponse(models),
  });
  router.service(aiserver.ServerConfigService, {
    getServerConfig: () => serverConfigResponse(),
  });
}
