/**
 * The adapter's HTTP/1.1 listener: connect-node routes for the Cursor paths, a
 * health probe, 404 for everything else. Handler errors become Connect errors
 * (connect-node maps anything that is not a ConnectError to `internal`), so bad
 * input never takes the process down.
 */
import { createServer, type Server, type ServerResponse } from "node:http";
import { connectNodeAdapter, type ConnectNodeAdapterOptions } from "@connectrpc/connect-node";
import { listen, urlHost, type Logger } from "@byok/platform";
import type { CursorAdapterMetrics } from "../metrics.ts";
import type { MemberModels } from "../models/member-models.ts";
import type { PeerLink } from "../transport/peer-link.ts";
import { RunRegistry } from "../transport/run-registry.ts";
import { RunRouter, type ForwardOutcome } from "../transport/run-router.ts";
import type { RunSessionFactory } from "../transport/session-port.ts";
import { createAppendHandler } from "./bidi-append-handler.ts";
import { createDirectAppend } from "./bidi-append-direct.ts";
import { createDirectRunSse } from "./run-sse-direct.ts";
import { registerRoutes } from "./routes.ts";

/** The first append of a run carries the whole client checkpoint (and inline images). */
const MAX_REQUEST_BYTES = 64 * 1024 * 1024;
/** How long stop() lets open responses finish before it closes their sockets. */
const STOP_DRAIN_MS = 2_000;
const KEEP_ALIVE_TIMEOUT_MS = 65_000;

export const HEALTH_PATH = "/healthz";

export interface AdapterServerOptions {
  host: string;
  /** 0 picks a free port. */
  port: number;
  factory: RunSessionFactory;
  /** The model list each member is shown. */
  memberModels: MemberModels;
  heartbeatMs: number;
  runWaitMs: number;
  endGraceMs: number;
  /** The other adapter instances (undefined: this one is alone, e.g. transport tests without NATS). */
  peers?: PeerLink;
  metrics: CursorAdapterMetrics;
  log: Logger;
}

export interface AdapterServer {
  url: string;
  port: number;
  /** Runs with an open session and stream (metrics). */
  activeRuns(): number;
  /** RunSSE connections attached now (metrics). */
  openRunSseStreams(): number;
  /** Ends every run (clients see `unavailable`) and closes the listener. */
  stop(): Promise<void>;
}

export async function startAdapterServer(options: AdapterServerOptions): Promise<AdapterServer> {
  const { log } = options;
  const registry: RunRegistry = new RunRegistry({
    factory: options.factory,
    log,
    runWaitMs: options.runWaitMs,
    endGraceMs: options.endGraceMs,
    onForgotten: (requestId) => runRouter.forgotten(requestId),
  });
  const runRouter = new RunRouter({
    registry,
    check: (runRequest) => options.factory.check(runRequest),
    peers: options.peers,
    log,
    runWaitMs: options.runWaitMs,
    onForwarded: (outcome: ForwardOutcome) => options.metrics.appendForwarded(outcome),
  });
  const handler = connectNodeAdapter({
    routes: (router) => registerRoutes(router, { router: runRouter, memberModels: options.memberModels, heartbeatMs: options.heartbeatMs, metrics: options.metrics, log }),
    readMaxBytes: MAX_REQUEST_BYTES,
    fallback: answerOutsideConnect,
  });
  // Cursor's BidiAppends (one per KV answer) and RunSSEs skip connect-node; the routes above serve the other shapes.
  const directAppend = createDirectAppend({ append: createAppendHandler({ router: runRouter, log }), readMaxBytes: MAX_REQUEST_BYTES });
  const directRunSse = createDirectRunSse({ router: runRouter, heartbeatMs: options.heartbeatMs, metrics: options.metrics, log, readMaxBytes: MAX_REQUEST_BYTES });
  // Idle keep-alive connections stay open longer than the clients in front keep theirs (the edge
  // proxy's pool, a load balancer's 60 s), so a request on a reused connection does not meet the
  // server closing it at the same moment (Node's default is 5 s).
  const server = createServer({ keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS }, (req, res) => {
    if (!directAppend(req, res) && !directRunSse(req, res)) handler(req, res);
  });
  const inFlight = trackResponses(server);
  server.on("clientError", (err, socket) => {
    log.debug({ err }, "malformed HTTP request");
    if (socket.writable) socket.end("HTTP/1.1 400 Bad Request\r\nconnection: close\r\n\r\n");
  });

  const port = await listen(server, options.port, options.host);
  const host = urlHost(options.host);
  log.info({ host: options.host, port }, "cursor adapter listening");

  let stopped: Promise<void> | undefined;
  return {
    url: `http://${host}:${port}`,
    port,
    activeRuns: () => registry.activeRuns(),
    openRunSseStreams: () => registry.attachedReaders(),
    stop: () => {
      stopped ??= (async () => {
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        runRouter.shutdown();
        // Once the responses in flight (the EndStreams written by shutdown) are
        // done, no socket carries anything we owe a client.
        const force = setTimeout(() => server.closeAllConnections(), STOP_DRAIN_MS);
        await inFlight.idle();
        server.closeAllConnections();
        await closed;
        clearTimeout(force);
      })();
      return stopped;
    },
  };
}

/** Counts responses not yet closed; `idle()` resolves when there are none. */
function trackResponses(server: Server): { idle(): Promise<void> } {
  let open = 0;
  let waiters: Array<() => void> = [];
  server.on("request", (_req, res: ServerResponse) => {
    open += 1;
    res.once("close", () => {
      open -= 1;
      if (open > 0) return;
      for (const resolve of waiters) resolve();
      waiters = [];
    });
  });
  return {
    idle: () => (open === 0 ? Promise.resolve() : new Promise((resolve) => waiters.push(resolve))),
  };
}

const answerOutsideConnect: NonNullable<ConnectNodeAdapterOptions["fallback"]> = (req, res) => {
  if (req.method === "GET" && req.url === HEALTH_PATH) {
    res.writeHead(200, { "content-type": "text/plain" });
    res.end("ok\n");
    return;
  }
  res.writeHead(404, { "content-type": "text/plain" });
  res.end("not found\n");
};
