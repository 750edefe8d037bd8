/** What every session of one factory shares: deps, prompt assets, store client, web tools, stream setup. */
import { runStreamsOnce, type EnsureRunStreams } from "@byok/run-client";
import { natsToolSetStore, ToolSets } from "@byok/platform";
import { StoreClient } from "@byok/store-client";
import { PromptAssets } from "../prompting/prompt-assets.ts";
import { HistoryMemory } from "../request/history-memory.ts";
import { inlineHistoryReader, type HistoryReader } from "../request/history-reader.ts";
import type { WebTools } from "../tools/web-tools.ts";
import { createGatewayWebTools } from "../web/gateway-web-tools.ts";
import type { SessionDeps } from "./deps.ts";

export interface SessionServices {
  deps: SessionDeps;
  prompts: PromptAssets;
  store: StoreClient;
  /** WebFetch / WebSearch on the gateway (pages cached per conversation). */
  web: WebTools;
  /** Creates/updates the run JetStream streams once per factory (retried after a failure). */
  ensureStreams: EnsureRunStreams;
  /** Runs name their tool set by digest (stored once per process in the TOOL_SETS stream). */
  toolSets: ToolSets;
  /** What this process imported per conversation (the next turn imports only what is new). */
  history: HistoryMemory;
  /** Reads client history roots into messages. */
  histories: HistoryReader;
}

export function createSessionServices(deps: SessionDeps): SessionServices {
  const store = new StoreClient(deps.nc, deps.names, { timeoutMs: deps.timeouts.storeMs });
  return {
    deps,
    prompts: new PromptAssets(deps.promptDir),
    store,
    web: createGatewayWebTools(deps.web, { store, converter: deps.converter, log: deps.log.child({ component: "web-tools" }) }),
    ensureStreams: runStreamsOnce(deps.nc, deps.names),
    toolSets: new ToolSets(natsToolSetStore(deps.nc, deps.names), deps.log.child({ component: "tool-sets" })),
    history: new HistoryMemory(),
    histories: deps.histories ?? inlineHistoryReader,
  };
}
