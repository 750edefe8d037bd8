/**
 * Shared pieces of the agent tool tests (tests/agent-*.test.ts): an Anthropic
 * Messages stream with one text block for the mock LLM, a second provider and
 * model in the harness config, and a small loopback web server that serves
 * pages, redirects and SearXNG-shaped search answers.
 */
import http, { type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { GatewayHarness, HarnessGatewayConfig } from "@byok/test-support/gateway-harness";
import { HARNESS_MOCK_KEY_ENV } from "@byok/test-support/gateway-harness";
import type { MockLlm } from "@byok/test-support/mock-llm";

/** An Anthropic Messages stream answering with `text` (end_turn, with usage). */
export function anthropicTextStream(id: string, text: string): string {
  const events: Array<[string, unknown]> = [
    ["message_start", { type: "message_start", message: { id, type: "message", role: "assistant", model: "claude-test", content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 50, output_tokens: 1 } } }],
    ["content_block_start", { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }],
    ["content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "text_delta", text } }],
    ["content_block_stop", { type: "content_block_stop", index: 0 }],
    ["message_delta", { type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: 12 } }],
    ["message_stop", { type: "message_stop" }],
  ];
  return events.map(([event, data]) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`).join("");
}

export function enqueueAnthropicText(gw: GatewayHarness, id: string, text: string): void {
  gw.llm.enqueue({ kind: "sse", endpoint: "anthropic", body: anthropicTextStream(id, text) });
}

export const CLAUDE_MODEL_ID = "byok-test-claude";

/** Adds an Anthropic provider on the mock LLM and a model on it (CLAUDE_MODEL_ID). */
export function withClaudeModel(config: HarnessGatewayConfig, llm: MockLlm): void {
  config.providers["claude"] = { kind: "anthropic", baseUrl: llm.baseUrl("anthropic"), apiKeyEnv: HARNESS_MOCK_KEY_ENV, maxAttempts: 1 };
  config.models.push({ id: CLAUDE_MODEL_ID, displayName: "Harness Claude", provider: "claude", upstreamModel: "claude-test", contextWindow: 200_000, maxOutputTokens: 4_096 });
}

export interface LoopbackWeb {
  /** http://127.0.0.1:<port> */
  readonly origin: string;
  readonly port: number;
  /** Request paths (with query) in arrival order. */
  readonly hits: string[];
  route(path: string, handler: (req: IncomingMessage, res: ServerResponse) => void): void;
  stop(): Promise<void>;
}

export async function startLoopbackWeb(): Promise<LoopbackWeb> {
  const routes = new Map<string, (req: IncomingMessage, res: ServerResponse) => void>();
  const hits: string[] = [];
  const server = http.createServer((req, res) => {
    hits.push(req.url ?? "");
    const handler = routes.get(new URL(req.url ?? "/", "http://x").pathname);
    if (handler === undefined) res.writeHead(404).end("not found");
    else handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    origin: `http://127.0.0.1:${port}`,
    port,
    hits,
    route: (path, handler) => void routes.set(path, handler),
    stop: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
