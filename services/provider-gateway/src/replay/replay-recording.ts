/**
 * Replay one recorded stream through the real adapter: a local HTTP server
 * serves the recording's bytes as the endpoint would (recording.ts), and a
 * route of the given kind points the adapter's SDK at it. The request is a
 * one-line user message; the recording decides everything else.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { create } from "@bufbuild/protobuf";
import { ModelRequestSchema } from "@byok/contracts";
import { silentLogger, type ProviderKind } from "@byok/platform";
import { adapterFor } from "../adapters/index.ts";
import type { ModelEventBody } from "../events.ts";
import { runModelCall } from "../model-call.ts";
import type { Route } from "../routes.ts";
import { Secret } from "../secret.ts";
import { readRecording } from "./recording.ts";

export async function replayRecording(kind: ProviderKind, file: string, onEvent: (event: ModelEventBody) => void): Promise<void> {
  const events = readRecording(file, kind);
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      for (const event of events) res.write(event);
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    const route: Route = {
      id: `replay-${kind}`,
      displayName: `replay ${kind}`,
      aliases: [],
      kind,
      providerId: "replay",
      upstreamModel: "recorded-model",
      baseUrl: kind === "anthropic" ? origin : `${origin}/v1`,
      apiKey: new Secret("replay-no-key"),
      headers: {},
      maxAttempts: 1,
      headersTimeoutMs: 30_000,
      contextWindow: 1_000_000,
      maxOutputTokens: 4096,
      effort: undefined,
      efforts: [],
      supportsThinking: true,
      supportsImages: false,
      thinkingBudgetTokens: undefined,
      replayReasoningContent: true,
      reasoningSummary: undefined,
      promptCaching: false,
      promptCacheBreakpoints: "automatic",
    };
    const request = create(ModelRequestSchema, {
      callId: "replay:1",
      spec: { modelId: route.id },
      prompt: { mode: "agent", systemText: "" },
      messages: [{ body: { case: "user", value: { content: [{ part: { case: "text", value: { text: "replay" } } }] } } }],
    });
    await runModelCall(adapterFor(kind).bind(route, silentLogger()), request, onEvent, { signal: new AbortController().signal, log: silentLogger() });
  } finally {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
