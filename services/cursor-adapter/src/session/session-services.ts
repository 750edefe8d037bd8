/** What every session of one factory shares: deps, prompt assets, store client, stream setup. */
import { runStreamsOnce, type EnsureRunStreams } from "@byok/run-client";
import { StoreClient } from "@byok/store-client";
import { PromptAssets } from "../prompting/prompt-assets.ts";
import type { SessionDeps } from "./deps.ts";

export interface SessionServices {
  deps: SessionDeps;
  prompts: PromptAssets;
  store: StoreClient;
  /** Creates/updates the run JetStream streams once per factory (retried after a failure). */
  ensureStreams: EnsureRunStreams;
}

export function createSessionServices(deps: SessionDeps): SessionServices {
  return {
    deps,
    prompts: new PromptAssets(deps.promptDir),
    store: new StoreClient(deps.nc, deps.names, { timeoutMs: deps.timeouts.storeMs }),
    ensureStreams: runStreamsOnce(deps.nc, deps.names),
  };
}
