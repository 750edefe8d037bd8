/**
 * The gateway config file of the in-process harness: one BYOK model
 * (HARNESS_MODEL_ID) on a "mock" provider whose upstream is the mock LLM,
 * its key in HARNESS_MOCK_KEY_ENV. Re-exported by ./gateway-harness.ts.
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { MockEndpoint, MockLlm } from "./mock-llm.ts";

/** The BYOK model every harness serves (openai-chat kind unless `endpoint` says otherwise; upstream = the mock LLM). */
export const HARNESS_MODEL_ID = "byok-test-chat";
/** Env variable the harness config names for the mock provider's key (any value works). */
export const HARNESS_MOCK_KEY_ENV = "BYOK_HARNESS_MOCK_LLM_KEY";

/** What a test may change in the harness gateway config (also fields of GatewayHarnessOptions). */
export interface HarnessGatewayConfigOptions {
  /** Extra fields for the harness model in the gateway config (efforts, maxOutputTokens, subagentModel, ...). */
  model?: Readonly<Record<string, unknown>>;
  /** Endpoint kind of the mock provider (default openai-chat). */
  endpoint?: MockEndpoint;
  /** More models on the mock provider, after the harness model (each needs id, displayName, upstreamModel, contextWindow). */
  extraModels?: ReadonlyArray<Readonly<Record<string, unknown>>>;
  /**
   * Changes the gateway config before it is written (more providers and models,
   * the `web` section, ...); `llm` gives the mock's base URLs.
   */
  configure?: (config: HarnessGatewayConfig, llm: MockLlm) => void;
  /** Attempts before the first byte for the mock provider (default 1: an HTTP 500 is final). */
  providerMaxAttempts?: number;
}

/** The gateway config file the harness writes, as JSON (see packages/platform/src/gateway-config.ts). */
export interface HarnessGatewayConfig {
  providers: Record<string, Record<string, unknown>>;
  models: Array<Record<string, unknown>>;
  web?: Record<string, unknown>;
}

/**
 * Writes the harness gateway config (one BYOK model served by the mock LLM)
 * into `dir`; returns its path. The mock key lives in HARNESS_MOCK_KEY_ENV.
 */
export async function writeHarnessGatewayConfig(
  dir: string,
  llm: MockLlm,
  options: HarnessGatewayConfigOptions = {},
): Promise<string> {
  const path = join(dir, "gateway.json");
  const endpoint = options.endpoint ?? "openai-chat";
  const config: HarnessGatewayConfig = {
    providers: { mock: { kind: endpoint, baseUrl: llm.baseUrl(endpoint), apiKeyEnv: HARNESS_MOCK_KEY_ENV, maxAttempts: options.providerMaxAttempts ?? 1 } },
    models: [
      { id: HARNESS_MODEL_ID, displayName: "Harness chat model", provider: "mock", upstreamModel: "gpt-4o", contextWindow: 128_000, ...options.model },
      ...(options.extraModels ?? []).map((m) => ({ provider: "mock", ...m })),
    ],
  };
  options.configure?.(config, llm);
  await writeFile(path, JSON.stringify(config, null, 2));
  return path;
}
