/**
 * Every Connect route the adapter serves, bound to the generated service
 * descriptors (the paths are `/<package>.<Service>/<Method>`). The model-list
 * answers are per member (the edge proxy's member header): only the models
 * the member's team allows.
 */
import type { ConnectRouter, HandlerContext } from "@connectrpc/connect";
import { agent, aiserver } from "@byok/cursor-protocol";
import type { Logger } from "@byok/platform";
import type { MemberModels } from "../models/member-models.ts";
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
import { memberIdOf } from "./request-identity.ts";
import { createRunSseHandler } from "./run-sse-handler.ts";
import { serverConfigResponse } from "./server-config.ts";

export interface RouteDeps {
  registry: RunRegistry;
  memberModels: MemberModels;
  heartbeatMs: number;
  metrics: CursorAdapterMetrics;
  log: Logger;
}

export function registerRoutes(router: ConnectRouter, deps: RouteDeps): void {
  const models = (context: HandlerContext) => deps.memberModels.modelsFor(memberIdOf(context.requestHeader));
  router.service(agent.AgentService, {
    runSSE: createRunSseHandler(deps),
    getUsableModels: async (_request, context) => usableModelsResponse(await models(context)),
    getDefaultModelForCli: async (_request, context) => defaultModelForCliResponse(await models(context)),
  });
  router.service(aiserver.BidiService, {
    bidiAppend: createBidiAppendHandler(deps),
  });
  router.service(aiserver.AiService, {
    availableModels: async (request, context) => availableModelsResponse(await models(context), request),
    getServerConfig: () => serverConfigResponse(),
    getUsableModels: async (_request, context) => usableModelsResponse(await models(context)),
    getDefaultModelForCli: async (_request, context) => defaultModelForCliResponse(await models(context)),
    getDefaultModel: async (_request, context) => defaultModelResponse(await models(context)),
    getDefaultModelNudgeData: async (_request, context) => defaultModelNudgeDataResponse(await models(context)),
  });
  router.service(aiserver.ServerConfigService, {
    getServerConfig: () => serverConfigResponse(),
  });
}
