/**
 * Mock upstream LLM: a real HTTP server on 127.0.0.1 that answers the three
 * endpoint kinds with queued responses (recorded fixtures, synthetic streams or
 * HTTP errors) and records every request, so the official SDKs in the provider
 * gateway parse real bytes over a real socket.
 *
 *   const llm = await startMockLlm();
 *   // gateway config: baseUrl = llm.baseUrl("openai-chat") (".../v1") or llm.baseUrl("anthropic") (origin)
 *   llm.enqueue({ kind: "fixture", file: ".../fixtures/providers/openai-chat/openai-gpt4o-text-usage.sse" });
 *   ... run the call ...
 *   llm.requests[0].body  // parsed JSON request body (also rawBody, headers, path)
 *   await llm.stop();
 *
 * Endpoints and paths: openai-chat POST /v1/chat/completions, openai-responses
 * POST /v1/responses, anthropic POST /v1/messages (query strings ignored).
 * Responses are served FIFO per path; with nothing queued for a path the mock
 * answers 500 `{"type":"error","error":{"type":"mock_llm_queue_empty","message":...}}`
 * (a shape both SDKs read).
 *
 * Queued responses (`kind`):
 * - "fixture": a recording file. Its endpoint is the folder it sits in
 *   (openai-chat/, openai-responses/, anthropic/) unless `endpoint` is given.
 *   `.sse` is sent byte for byte; `.jsonl` (one payload per line) is framed as
 *   SSE: `event: <type>` lines for Responses/Anthropic, and for chat a final
 *   `data: [DONE]` only when the recording implies it (a finish_reason and no
 *   error payload) — the rule lives in services/provider-gateway/src/replay/recording.ts.
 * - "sse": a raw SSE body string, or a function of the request it answers
 *   (a response that depends on what the gateway sent, e.g. an id from a tool
 *   result). "chunks": JSON payloads framed like `.jsonl`.
 * - "error": an HTTP status with a JSON (object) or text (string) body and an
 *   optional Retry-After header.
 * - "respond": a function of the request that returns one of the above (for
 *   answers that depend on what was sent, e.g. usage counted from the body).
 * - "json": a 200 JSON answer (a non-streamed response); `path` serves it on
 *   another path of the endpoint (e.g. "/v1/messages/count_tokens").
 * Stream shaping (all optional): `delayHeadersMs`; `holdHeaders` (send nothing
 * until `release()`); `holdAfterEvents: n` (send n events, then wait for
 * `release()`); `disconnectAfterEvents: n` (send n events, then destroy the
 * socket); `endAfterEvents: n` (send n events, then end the body cleanly: a
 * bare EOF); `eventIntervalMs: n` (wait n ms before each event after the
 * first: a paced upstream, e.g. 33 for 30 tokens/s); `eventEveryMs: n` (event
 * i is due i * n ms after the first, on the mock's own clock: one sent late does
 * not push back the ones after it, as a provider's pace does not depend on how
 * busy its client is; for benchmarks of many paced streams); `burst` (hand every
 * event to the socket in one write: chunks that arrive together; ignored with
 * the hold/disconnect/end shapes). `enqueue` returns a handle: `release()`, `held` (resolves when
 * the response reaches its hold point) and `request` (the request it answered).
 *
 * Each recorded request has `aborted: true` once the client went away before
 * the response was complete (what cancel tests look for) and `receivedAt`
 * (ms clock) for retry timing checks.
 *
 * The recorded fixtures are in this package (fixtures.ts):
 * `providerFixture("openai-chat", "x.sse")` gives a full path.
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { performance } from "node:perf_hooks";
import {
  jsonPayloadsToSseEvents,
  readRecording,
  recordingFlavorOf,
  splitSseEvents,
  type RecordingFlavor,
} from "@byok/provider-gateway/replay/recording";

export type MockEndpoint = RecordingFlavor;

export const MOCK_LLM_PATHS: Readonly<Record<MockEndpoint, string>> = {
  "openai-chat": "/v1/chat/completions",
  "openai-responses": "/v1/responses",
  anthropic: "/v1/messages",
};

export interface StreamShape {
  delayHeadersMs?: number;
  holdHeaders?: boolean;
  holdAfterEvents?: number;
  disconnectAfterEvents?: number;
  endAfterEvents?: number;
  eventIntervalMs?: number;
  eventEveryMs?: number;
  burst?: boolean;
}

export type MockResponse = StaticMockResponse | { kind: "respond"; endpoint: MockEndpoint; respond(request: RecordedRequest): StaticMockResponse };

export type StaticMockResponse =
  | ({ kind: "fixture"; file: string; endpoint?: MockEndpoint } & StreamShape)
  | ({ kind: "sse"; endpoint: MockEndpoint; body: string | ((request: RecordedRequest) => string) } & StreamShape)
  | ({ kind: "chunks"; endpoint: MockEndpoint; chunks: readonly unknown[] } & StreamShape)
  | { kind: "json"; endpoint: MockEndpoint; body: unknown; path?: string; delayHeadersMs?: number; holdHeaders?: boolean }
  | {
      kind: "error";
      endpoint: MockEndpoint;
      status: number;
      body?: unknown;
      retryAfter?: string;
      headers?: Record<string, string>;
      delayHeadersMs?: number;
      holdHeaders?: boolean;
    };

export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly rawBody: string;
  /** Parsed JSON body, or undefined when the body is not JSON. */
  readonly body: unknown;
  readonly receivedAt: number;
  /** The client closed the connection before the response was complete. */
  aborted: boolean;
}

export interface QueuedResponse {
  /** Lets a held response continue (no-op when nothing is held). */
  release(): void;
  /** Resolves when the response reaches its hold point (`holdHeaders` / `holdAfterEvents`). */
  readonly held: Promise<void>;
  /** Resolves with the request this response answered. */
  readonly request: Promise<RecordedRequest>;
}

export interface MockLlm {
  /** http://127.0.0.1:<port> */
  readonly url: string;
  /** The base URL to configure for an endpoint kind (OpenAI SDKs want ".../v1", Anthropic the origin). */
  baseUrl(endpoint: MockEndpoint): string;
  /** Every request received, in arrival order. */
  readonly requests: readonly RecordedRequest[];
  /** Requests received on one endpoint's path, in order. */
  requestsTo(endpoint: MockEndpoint): RecordedRequest[];
  enqueue(response: MockResponse): QueuedResponse;
  /** Responses still queued (for one endpoint, or all). */
  pending(endpoint?: MockEndpoint): number;
  stop(): Promise<void>;
}

interface Queued {
  readonly response: MockResponse;
  readonly release: () => void;
  readonly released: Promise<void>;
  readonly markHeld: () => void;
  readonly markServed: (request: RecordedRequest) => void;
}

export async function startMockLlm(): Promise<MockLlm> {
  const queues = new Map<string, Queued[]>();
  const requests: RecordedRequest[] = [];
  const releaseAll = new Set<() => void>();

  // Idle connections stay open 65 s, as the providers' endpoints and the benches' own upstreams keep them
  // (longer than the gateway's 30 s), instead of node's 5 s: the gateway then closes idle connections
  // itself, as it does in production.
  const server = createServer({ keepAliveTimeout: 65_000 }, (req, res) => {
    void handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500, { "content-type": "application/json" });
      res.end(JSON.stringify(errorBody("mock_llm_internal", `mock-llm: ${(err as Error).message}`)));
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const rawBody = Buffer.concat(chunks).toString("utf8");
    const path = new URL(req.url ?? "/", "http://mock").pathname;
    const record: RecordedRequest = {
      method: req.method ?? "GET",
      path,
      headers: req.headers,
      rawBody,
      body: parseJson(rawBody),
      receivedAt: Date.now(),
      aborted: false,
    };
    requests.push(record);
    let closedByMock = false;
    res.on("close", () => {
      if (!res.writableFinished && !closedByMock) record.aborted = true;
    });

    const queued = queues.get(path)?.shift();
    if (queued === undefined) {
      res.writeHead(500, { "content-type": "application/json" });
      res.end(JSON.stringify(errorBody("mock_llm_queue_empty", `mock-llm: no response queued for ${record.method} ${path}`)));
      return;
    }
    queued.markServed(record);
    const response = queued.response.kind === "respond" ? queued.response.respond(record) : queued.response;
    const clientGone = new Promise<void>((resolve) => res.once("close", () => resolve()));
    const wait = async (p: Promise<void>): Promise<boolean> => {
      await Promise.race([p, clientGone]);
      return !res.destroyed && !res.writableEnded;
    };

    if (response.delayHeadersMs !== undefined && !(await wait(delay(response.delayHeadersMs)))) return;
    if (response.holdHeaders === true) {
      queued.markHeld();
      if (!(await wait(queued.released))) return;
    }

    if (response.kind === "json") {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify(response.body));
      return;
    }
    if (response.kind === "error") {
      const headers: Record<string, string> = { ...(response.headers ?? {}) };
      if (response.retryAfter !== undefined) headers["retry-after"] = response.retryAfter;
      const text =
        typeof response.body === "string"
          ? response.body
          : JSON.stringify(response.body ?? errorBody("mock_error", `mock-llm: HTTP ${response.status}`));
      headers["content-type"] = typeof response.body === "string" ? "text/plain" : "application/json";
      res.writeHead(response.status, headers);
      res.end(text);
      return;
    }

    const events = eventsOf(response, record);
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
    res.flushHeaders();
    const plain = response.holdAfterEvents === undefined && response.disconnectAfterEvents === undefined && response.endAfterEvents === undefined;
    if (response.burst === true && plain) {
      await wait(new Promise<void>((r) => res.write(events.join(""), () => r())));
      res.end();
      return;
    }
    let firstSentAt = 0;
    for (let i = 0; i <= events.length; i++) {
      if (i > 0 && i < events.length && response.eventIntervalMs !== undefined && !(await wait(delay(response.eventIntervalMs)))) return;
      if (i > 0 && i < events.length && response.eventEveryMs !== undefined) {
        const due = firstSentAt + i * response.eventEveryMs - performance.now();
        if (due > 0 && !(await wait(delay(due)))) return;
      }
      if (i === response.holdAfterEvents) {
        queued.markHeld();
        if (!(await wait(queued.released))) return;
      }
      if (i === response.disconnectAfterEvents) {
        closedByMock = true;
        res.socket?.destroy();
        return;
      }
      if (i === response.endAfterEvents || i === events.length) break;
      // Wait until the event is handed to the socket, so a hold or disconnect comes after it.
      if (i === 0) firstSentAt = performance.now();
      if (!(await wait(new Promise<void>((r) => res.write(events[i] as string, () => r()))))) return;
    }
    res.end();
  }

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const url = `http://127.0.0.1:${port}`;

  return {
    url,
    baseUrl: (endpoint) => (endpoint === "anthropic" ? url : `${url}/v1`),
    requests,
    requestsTo: (endpoint) => requests.filter((r) => r.path === MOCK_LLM_PATHS[endpoint]),
    enqueue(response) {
      const path = response.kind === "json" && response.path !== undefined ? response.path : MOCK_LLM_PATHS[endpointOf(response)];
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      let markHeld!: () => void;
      const held = new Promise<void>((resolve) => (markHeld = resolve));
      let markServed!: (r: RecordedRequest) => void;
      const request = new Promise<RecordedRequest>((resolve) => (markServed = resolve));
      releaseAll.add(release);
      const queue = queues.get(path) ?? [];
      queue.push({ response, release, released, markHeld, markServed });
      queues.set(path, queue);
      return { release, held, request };
    },
    pending: (endpoint) =>
      endpoint === undefined
        ? [...queues.values()].reduce((n, q) => n + q.length, 0)
        : (queues.get(MOCK_LLM_PATHS[endpoint])?.length ?? 0),
    async stop() {
      for (const release of releaseAll) release();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function endpointOf(response: MockResponse): MockEndpoint {
  if (response.kind !== "fixture") return response.endpoint;
  const endpoint = response.endpoint ?? recordingFlavorOf(response.file);
  if (endpoint === undefined)
    throw new Error(`mock-llm: cannot tell the endpoint of ${response.file}; put it under openai-chat/, openai-responses/ or anthropic/, or pass endpoint`);
  return endpoint;
}

function eventsOf(response: Exclude<StaticMockResponse, { kind: "error" } | { kind: "json" }>, request: RecordedRequest): string[] {
  switch (response.kind) {
    case "fixture":
      return readRecording(response.file, endpointOf(response));
    case "sse":
      return splitSseEvents(typeof response.body === "string" ? response.body : response.body(request));
    case "chunks":
      return jsonPayloadsToSseEvents(
        response.chunks.map((c) => JSON.stringify(c)),
        response.endpoint,
      );
    default: {
      const never: never = response;
      throw new Error(`unknown mock response ${JSON.stringify(never)}`);
    }
  }
}

function errorBody(type: string, message: string): unknown {
  return { type: "error", error: { type, message } };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
