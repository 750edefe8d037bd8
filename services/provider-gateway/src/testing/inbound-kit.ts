/**
 * Test kit for the HTTP front: the real provider gateway (startProviderGateway,
 * its own bus prefix on real NATS, the replay KV bucket) with the inbound API
 * on a free port, one route of each endpoint kind (plain and reasoning
 * variants) pointing at the mock LLM, member keys answered by a responder of
 * the store's member.verify operation on the bus (the store itself is another
 * service), and the official SDK clients pointed at the gateway.
 */
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { STORE_OPERATIONS, StoreErrorKind } from "@byok/contracts";
import { serveRequests, silentLogger, type GatewayConfig } from "@byok/platform";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { createTestBus, type TestBus } from "@byok/test-support/infra";
import { startMockLlm, type MockLlm } from "@byok/test-support/mock-llm";
import type { CallAccounting } from "../accounting/call-accounting.ts";
import { loadConfig } from "../config.ts";
import { startProviderGateway, type ProviderGateway } from "../service.ts";

export const MEMBER_KEY = "bgk_member_one_test_key";
export const MEMBER_ID = "member-one";
const PROVIDER_KEY = "sk-upstream-provider-key-not-real";

/** Route ids of the kit's gateway config. */
export const ROUTES = {
  chat: "team-chat",
  chatReasoning: "team-deepseek",
  responses: "team-responses",
  responsesReasoning: "team-gpt5",
  anthropic: "team-claude",
  anthropicThinking: "team-claude-thinking",
} as const;

export interface InboundKit {
  readonly url: string;
  readonly llm: MockLlm;
  readonly gateway: ProviderGateway;
  readonly bus: TestBus;
  /** member.verify requests the responder answered. */
  verifyCalls(): number;
  openai(key?: string): OpenAI;
  anthropic(options?: { key?: string; authToken?: string }): Anthropic;
  /** A raw request to the gateway. */
  fetch(path: string, init?: { method?: string; body?: unknown; headers?: Record<string, string> }): Promise<Response>;
  stop(): Promise<void>;
}

export interface InboundKitOptions {
  readonly accounting?: CallAccounting;
  readonly env?: Record<string, string>;
}

export async function startInboundKit(options: InboundKitOptions = {}): Promise<InboundKit> {
  const bus = createTestBus();
  const llm = await startMockLlm();
  const nc: NatsConnection = await connect({ servers: bus.natsUrl });
  let verifyCalls = 0;
  const op = STORE_OPERATIONS.verifyMemberKey;
  const responder = serveRequests(
    nc,
    `${bus.prefix}.store.${op.name}`,
    op.request,
    op.response,
    async (request) => {
      verifyCalls++;
      return request.key === MEMBER_KEY ? { memberId: MEMBER_ID, name: "one" } : { error: { kind: StoreErrorKind.NOT_FOUND, message: "no such key" } };
    },
    () => ({ error: { kind: StoreErrorKind.INTERNAL, message: "responder failed" } }),
    { log: silentLogger() },
  );
  await nc.flush();
  const config = loadConfig({ NATS_URL: bus.natsUrl, BUS_PREFIX: bus.prefix, INBOUND_PORT: "0", KIT_PROVIDER_KEY: PROVIDER_KEY, ACCOUNTING: "off", ...options.env }, () => JSON.stringify(kitGatewayConfig(llm)));
  const gateway = await startProviderGateway(config, {
    log: silentLogger(),
    backoff: { baseDelayMs: 10, maxDelayMs: 20 },
    ...(options.accounting === undefined ? {} : { accounting: options.accounting }),
  });
  const url = gateway.inboundUrl as string;
  return {
    url,
    llm,
    gateway,
    bus,
    verifyCalls: () => verifyCalls,
    openai: (key = MEMBER_KEY) => new OpenAI({ apiKey: key, baseURL: `${url}/v1`, maxRetries: 0 }),
    anthropic: (auth = { key: MEMBER_KEY }) =>
      new Anthropic({ ...(auth.authToken === undefined ? { apiKey: auth.key ?? null } : { apiKey: null, authToken: auth.authToken }), baseURL: url, maxRetries: 0 }),
    fetch: (path, init = {}) =>
      fetch(`${url}${path}`, {
        method: init.method ?? (init.body === undefined ? "GET" : "POST"),
        headers: { authorization: `Bearer ${MEMBER_KEY}`, "content-type": "application/json", ...init.headers },
        ...(init.body === undefined ? {} : { body: typeof init.body === "string" ? init.body : JSON.stringify(init.body) }),
      }),
    async stop() {
      await gateway.stop();
      responder.unsubscribe();
      await nc.close();
      await llm.stop();
      await bus.cleanup();
    },
  };
}

function kitGatewayConfig(llm: MockLlm): GatewayConfig {
  const provider = (kind: "openai-chat" | "openai-responses" | "anthropic") => ({ kind, baseUrl: llm.baseUrl(kind), apiKeyEnv: "KIT_PROVIDER_KEY", headers: {}, maxAttempts: 1, headersTimeoutMs: 10_000 });
  const model = (id: string, providerName: string, upstreamModel: string, extra: Partial<GatewayConfig["models"][number]> = {}) => ({
    id,
    displayName: id,
    provider: providerName,
    upstreamModel,
    contextWindow: 200_000,
    maxOutputTokens: 8192,
    efforts: [],
    supportsThinking: false,
    supportsImages: true,
    replayReasoningContent: false,
    ...extra,
  });
  return {
    providers: { chat: provider("openai-chat"), responses: provider("openai-responses"), anthropic: provider("anthropic") },
    models: [
      model(ROUTES.chat, "chat", "gpt-4o-mini", { aliases: ["gpt-4o-mini"] }),
      model(ROUTES.chatReasoning, "chat", "deepseek-reasoner", { supportsThinking: true, replayReasoningContent: true }),
      model(ROUTES.responses, "responses", "gpt-4o"),
      model(ROUTES.responsesReasoning, "responses", "gpt-5", { supportsThinking: true, reasoningSummary: "auto", efforts: ["low", "medium", "high"] }),
      model(ROUTES.anthropic, "anthropic", "claude-upstream-a", { aliases: ["claude-sonnet-4-5-20250929"] }),
      model(ROUTES.anthropicThinking, "anthropic", "claude-upstream-b", { supportsThinking: true, thinkingBudgetTokens: 1024 }),
    ],
  };
}
