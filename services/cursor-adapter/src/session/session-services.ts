/** What every session of one factory shares: deps, prompt assets, store client, stream setup. */
import { ensureRunStreams } from "@byok/platform";
import { StoreClient } from "@byok/store-client";
import { PromptAssets } from "../prompting/prompt-assets.ts";
import type { SessionDeps } from "./deps.ts";
import { BusPublishError } from "./run-bus.ts";

export interface SessionServices {
  deps: SessionDeps;
  prompts: PromptAssets;
  store: StoreClient;
  /** Creates/updates the run JetStream streams once per factory (retried after a failure). */
  ensureStreams(): Promise<void>;
}

export function createSessionServices(deps: SessionDeps): SessionServices {
  let streams: Promise<void> | undefined;
  return {
    deps,
    prompts: new PromptAssets(deps.promptDir),
    store: new StoreClient(deps.nc, deps.names, { timeoutMs: deps.timeouts.storeMs }),
    ensureStreams() {
      streams ??= ensureRunStreams(deps.nc, deps.names).catch((cause: unknown) => {
        streams = undefined;
        throw new BusPublishError(`cannot set up the run streams: ${(cause as Error).message}`, { cause });
      });
      return streams;
    },
  };
}
