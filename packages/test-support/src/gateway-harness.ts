/**
 * The whole gateway in-process for an end-to-end test: store + provider gateway
 * + N run workers + cursor adapter (+ edge proxy, + ACP adapter on TLS with a
 * throwaway team CA, when asked), each started through its own
 * `loadConfig(env)` + `start<Service>(config)`, on one fresh database
 * (createTestDatabase) and one private bus prefix (createTestBus), with a
 * gateway config file (written to a temp dir) whose BYOK model points at a
 * mock LLM. `stop()` tears everything down and drops the database.
 *
 *   const gw = await startGateway({ workers: 2 });   // { adapters: 2, edgeProxies: 2 }: several instances
 *   gw.llm.enqueue({ kind: "fixture", file: providerFixture("openai-chat", "openai-gpt4o-text-usage.sse") });
 *   const result = await gw.client().conversation().send("hi", { modelId: gw.modelId }).finished;
 *   await gw.stop();
 *
 * Service logs are silent unless HARNESS_LOG_LEVEL (e.g. "debug") is set.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import type { MessageInitShape, MessageShape } from "@bufbuild/protobuf";
import { busNames, STORE_OPERATIONS, type BusNames, type StoreOperations } from "@byok/contracts";
import { busRequest, connectNats, silentLogger, type NatsConnection } from "@byok/platform";
import { loadConfig as loadStoreConfig } from "@byok/store/config";
import { startStore } from "@byok/store/service";
import { loadConfig as loadGatewayServiceConfig } from "@byok/provider-gateway/config";
import { startProviderGateway } from "@byok/provider-gateway/service";
import { loadConfig as loadWorkerConfig } from "@byok/run-worker/config";
import { startRunWorker } from "@byok/run-worker/service";
import { loadConfig as loadAdapterConfig } from "@byok/cursor-adapter/config";
import { startCursorAdapter } from "@byok/cursor-adapter/service";
import { loadConfig as loadEdgeProxyConfig } from "@byok/edge-proxy/config";
import { startEdgeProxy } from "@byok/edge-proxy/service";
import { loadConfig as loadAcpAdapterConfig } from "@byok/acp-adapter/config";
import { startAcpAdapter, type AcpAdapter } from "@byok/acp-adapter/service";
import { FakeCursorClient, type FakeCursorOptions } from "./fake-cursor/index.ts";
import { createTestBus, createTestDatabase, type TestBus, type TestDatabase } from "./infra.ts";
import { startMockLlm, type MockEndpoint, type MockLlm } from "./mock-llm.ts";
import { serviceLogger, type LogCapture } from "./service-logger.ts";
import { createTestTls } from "./test-tls.ts";

/** The BYOK model every harness serves (openai-chat kind unless `endpoint` says otherwise; upstream = the mock LLM). */
export const HARNESS_MODEL_ID = "byok-test-chat";
/** Env variable the harness config names for the mock provider's key (any value works). */
export const HARNESS_MOCK_KEY_ENV = "BYOK_HARNESS_MOCK_LLM_KEY";

type EnvOverrides = Readonly<Record<string, string>>;

export interface GatewayHarnessOptions {
  /** Run workers to start (default 1). */
  workers?: number;
  /**
   * Start the provider gateway in-process (default true). false: the test
   * starts its own, e.g. as child processes with `providerGatewayEnv()`.
   */
  providerGateway?: boolean;
  /** Extra environment per service, e.g. { cursorAdapter: { HEARTBEAT_MS: "200" } }. */
  env?: { store?: EnvOverrides; providerGateway?: EnvOverrides; runWorker?: EnvOverrides; cursorAdapter?: EnvOverrides; acpAdapter?: EnvOverrides };
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
  /** Also start the edge proxy in front of the adapter (pass-through traffic goes to a closed local port). */
  edgeProxy?: boolean;
  /** Cursor adapter instances (default 1). */
  adapters?: number;
  /** Edge proxy instances (default 1 with `edgeProxy`; more implies `edgeProxy`): proxy i sends its BYOK runs to adapter i mod adapters; they share one CA. */
  edgeProxies?: number;
  /** Also start the ACP adapter (TLS on 127.0.0.1 with a certificate of a throwaway team CA). */
  acpAdapter?: boolean;
  /** NATS server for the whole gateway (default: NATS_URL, the machine's); failure tests pass a private one. */
  natsUrl?: string;
  /** Postgres server (admin database URL) for the test database (default: DATABASE_URL, the machine's). */
  databaseAdminUrl?: string;
  /** Capture every service's log lines (at `capture.level`) instead of printing them. */
  logs?: LogCapture;
  /** The store's clock (retention cut-off, key expiry, budget windows); default the real one. */
  storeNow?: () => Date;
  /** Start every service's ops listener (/metrics, /healthz) on a free loopback port (METRICS_PORT=0). */
  opsListeners?: boolean;
}

/** Ops listener URLs of the in-process services (set with { opsListeners: true }). */
export interface OpsUrls {
  readonly store: string | undefined;
  readonly providerGateway: string | undefined;
  readonly cursorAdapter: string | undefined;
  readonly edgeProxy: string | undefined;
}

export interface EdgeProxyHandle {
  /** http://127.0.0.1:<port> */
  readonly url: string;
  readonly caCertPem: string;
  /** A member and their gateway key (created in the store). */
  createMember(name: string): Promise<{ memberId: string; key: string }>;
  /**
   * A fake Cursor client that reaches https://api2.cursor.sh through the proxy with the member's key and the team CA;
   * `appendVia`: its BidiAppends go through these proxies instead (seqno n through appendVia[n % length]).
   */
  client(member: { name: string; key: string }, options?: { appendVia?: readonly EdgeProxyHandle[]; repeatAppends?: boolean }): FakeCursorClient;
}

export interface AcpHandle {
  /** https://127.0.0.1:<port>: what a member passes to the bridge as --gateway. */
  readonly gatewayUrl: string;
  /** The team CA's certificate file (the bridge's --ca). */
  readonly caFile: string;
  readonly adapter: AcpAdapter;
}

export interface WorkerHandle {
  readonly workerId: string;
  /** Its ops listener (with { opsListeners: true }). */
  readonly opsUrl: string | undefined;
  /** Run deliveries this worker took (each is one attempt at one run). */
  runsTaken(): number;
  stop(): Promise<void>;
}

type StoreRequest<K extends keyof StoreOperations> = MessageInitShape<StoreOperations[K]["request"]>;
type StoreResponse<K extends keyof StoreOperations> = MessageShape<StoreOperations[K]["response"]>;

export interface GatewayHarness {
  /** The first adapter instance. */
  readonly adapterUrl: string;
  /** Every adapter instance, in start order. */
  readonly adapterUrls: readonly string[];
  /** The provider gateway's OpenAI/Anthropic-compatible API, when started with env.providerGateway.INBOUND_PORT. */
  readonly inboundUrl: string | undefined;
  readonly llm: MockLlm;
  readonly db: TestDatabase;
  readonly bus: TestBus;
  readonly names: BusNames;
  /** The test's own NATS connection (store queries, bus observation). */
  readonly nc: NatsConnection;
  readonly modelId: string;
  readonly configPath: string;
  readonly workers: readonly WorkerHandle[];
  /** Set when started with { edgeProxy: true } (the first proxy). */
  readonly edge: EdgeProxyHandle | undefined;
  /** Every edge proxy instance. */
  readonly edges: readonly EdgeProxyHandle[];
  /** Set when started with { acpAdapter: true }. */
  readonly acp: AcpHandle | undefined;
  /** A member and their gateway key (created in the store). */
  createMember(name: string): Promise<{ memberId: string; key: string }>;
  /** The services' ops listeners (workers: WorkerHandle.opsUrl). */
  readonly ops: OpsUrls;
  /** A fake Cursor client talking straight to the adapter (closed by stop()). */
  client(options?: Partial<FakeCursorOptions>): FakeCursorClient;
  /** One store operation over the bus, as the services call it. */
  store<K extends keyof StoreOperations>(operation: K, request: StoreRequest<K>): Promise<StoreResponse<K>>;
  /** A query on the test database (read-only checks). */
  sql<T extends Record<string, unknown>>(text: string, params?: unknown[]): Promise<T[]>;
  startWorker(): Promise<WorkerHandle>;
  /**
   * The environment a run worker of this gateway gets (bus, log level, the
   * harness's runWorker overrides, WORKER_ID): for a worker started as a child
   * process (`node services/run-worker/src/main.ts`).
   */
  runWorkerEnv(workerId: string): Record<string, string>;
  /**
   * The environment a provider gateway of this gateway gets (bus, gateway
   * config with the mock LLM, its key, the harness's providerGateway
   * overrides): for one started as a child process
   * (`node services/provider-gateway/src/main.ts`).
   */
  providerGatewayEnv(): Record<string, string>;
  stop(): Promise<void>;
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
  options: Pick<GatewayHarnessOptions, "model" | "extraModels" | "providerMaxAttempts" | "endpoint" | "configure"> = {},
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

export async function startGateway(options: GatewayHarnessOptions = {}): Promise<GatewayHarness> {
  const cleanups: Array<() => Promise<void>> = [];
  const cleanup = async (): Promise<void> => {
    const errors: unknown[] = [];
    for (const c of cleanups.splice(0).reverse()) {
      try {
        await c();
      } catch (err) {
        errors.push(err);
      }
    }
    if (errors.length > 0) throw new AggregateError(errors, "gateway harness: cleanup failed");
  };

  try {
    const db = await createTestDatabase(options.databaseAdminUrl);
    cleanups.push(() => db.drop());
    const bus = createTestBus(options.natsUrl);
    cleanups.push(() => bus.cleanup());
    const llm = await startMockLlm();
    cleanups.push(() => llm.stop());
    const names = busNames(bus.prefix);
    const dir = await mkdtemp(join(tmpdir(), "byok-harness-"));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));

    const configPath = await writeHarnessGatewayConfig(dir, llm, options);
    const busEnv = {
      NATS_URL: bus.natsUrl,
      BUS_PREFIX: bus.prefix,
      LOG_LEVEL: options.logs?.level ?? (process.env["HARNESS_LOG_LEVEL"] || "silent"),
      ...(options.opsListeners === true ? { METRICS_HOST: "127.0.0.1", METRICS_PORT: "0" } : {}),
    };
    const runWorkerEnv = (workerId: string): Record<string, string> => ({ ...busEnv, WORKER_ID: workerId, ...options.env?.runWorker });

    const nc = await connectNats(bus.natsUrl, "gateway-harness", silentLogger());
    cleanups.push(() => nc.close());

    const store = await startStore(loadStoreConfig({ ...busEnv, DATABASE_URL: db.url, ...options.env?.store }), {
      log: serviceLogger("store", options.logs),
      ...(options.storeNow !== undefined ? { now: options.storeNow } : {}),
    });
    cleanups.push(() => store.stop());

    const providerGatewayEnv = (): Record<string, string> => ({
      ...busEnv,
      GATEWAY_CONFIG: configPath,
      [HARNESS_MOCK_KEY_ENV]: "mock-llm-key-not-a-secret",
      ...options.env?.providerGateway,
    });
    let providerGatewayOps: string | undefined;
    let inboundUrl: string | undefined;
    if (options.providerGateway !== false) {
      const gateway = await startProviderGateway(loadGatewayServiceConfig(providerGatewayEnv()), { log: serviceLogger("provider-gateway", options.logs) });
      cleanups.push(() => gateway.stop());
      providerGatewayOps = gateway.opsUrl;
      inboundUrl = gateway.inboundUrl;
    }

    const workers: WorkerHandle[] = [];
    const startWorker = async (): Promise<WorkerHandle> => {
      const index = workers.length + 1;
      const worker = await startRunWorker(loadWorkerConfig(runWorkerEnv(`harness-worker-${index}`)), {
        log: serviceLogger(`run-worker-${index}`, options.logs),
      });
      const handle: WorkerHandle = { workerId: worker.workerId, opsUrl: worker.opsUrl, runsTaken: () => worker.runsTaken(), stop: () => worker.stop() };
      workers.push(handle);
      cleanups.push(() => worker.stop());
      return handle;
    };
    for (let i = 0; i < (options.workers ?? 1); i++) await startWorker();

    const adapterCount = options.adapters ?? 1;
    const adapters: Array<{ url: string; opsUrl: string | undefined }> = [];
    for (let i = 1; i <= adapterCount; i++) {
      const adapter = await startCursorAdapter(
        loadAdapterConfig({ ...busEnv, HOST: "127.0.0.1", PORT: "0", GATEWAY_CONFIG: configPath, ...options.env?.cursorAdapter }),
        { log: serviceLogger(adapterCount === 1 ? "cursor-adapter" : `cursor-adapter-${i}`, options.logs) },
      );
      cleanups.push(() => adapter.stop());
      adapters.push(adapter);
    }

    const createMember = async (name: string): Promise<{ memberId: string; key: string }> => {
      const op = STORE_OPERATIONS.createMember;
      const res = await busRequest(nc, names.store(op.name), op.request, { name }, op.response, { timeoutMs: 10_000 });
      if (res.error !== undefined || res.member === undefined) throw new Error(`member.create failed: ${res.error?.message ?? "no member"}`);
      return { memberId: res.member.memberId, key: res.key };
    };

    let acp: AcpHandle | undefined;
    if (options.acpAdapter === true) {
      const tls = await createTestTls();
      const caFile = join(dir, "team-ca.crt");
      await writeFile(caFile, tls.caPem);
      await writeFile(join(dir, "acp.crt"), tls.certPem);
      await writeFile(join(dir, "acp.key"), tls.keyPem, { mode: 0o600 });
      const adapter = await startAcpAdapter(
        loadAcpAdapterConfig({
          ...busEnv,
          ACP_HOST: "127.0.0.1",
          ACP_PORT: "0",
          ACP_TLS_CERT_FILE: join(dir, "acp.crt"),
          ACP_TLS_KEY_FILE: join(dir, "acp.key"),
          GATEWAY_CONFIG: configPath,
          ...options.env?.acpAdapter,
        }),
        { log: serviceLogger("acp-adapter", options.logs) },
      );
      cleanups.push(() => adapter.stop());
      acp = { gatewayUrl: `https://127.0.0.1:${adapter.port}`, caFile, adapter };
    }

    const edges: EdgeProxyHandle[] = [];
    let edgeOpsUrl: string | undefined;
    const clients: FakeCursorClient[] = [];
    const proxyCount = options.edgeProxies ?? (options.edgeProxy === true ? 1 : 0);
    for (let i = 0; i < proxyCount; i++) {
      const proxy = await startEdgeProxy(
        loadEdgeProxyConfig({
          ...busEnv,
          PROXY_HOST: "127.0.0.1",
          PROXY_PORT: "0",
          ADAPTER_URL: adapters[i % adapters.length]!.url,
          // Nothing in these tests may reach Cursor: pass-through traffic goes to a closed port.
          UPSTREAM_ORIGIN: "http://127.0.0.1:9",
          CA_DIR: join(dir, "ca"),
          GATEWAY_CONFIG: configPath,
        }),
        { log: serviceLogger(proxyCount === 1 ? "edge-proxy" : `edge-proxy-${i + 1}`, options.logs) },
      );
      cleanups.push(() => proxy.stop());
      edgeOpsUrl ??= proxy.opsUrl;
      const tunnelTo = (url: string, member: { name: string; key: string }) => ({
        baseUrl: "https://api2.cursor.sh",
        proxy: { url, authorization: `Basic ${Buffer.from(`${member.name}:${member.key}`).toString("base64")}` },
        ca: proxy.caCertPem,
      });
      edges.push({
        url: proxy.url,
        caCertPem: proxy.caCertPem,
        createMember,
        client(member, clientOptions = {}) {
          const client = new FakeCursorClient({
            transport: tunnelTo(proxy.url, member),
            ...(clientOptions.appendVia === undefined ? {} : { appendTransports: clientOptions.appendVia.map((via) => tunnelTo(via.url, member)) }),
            ...(clientOptions.repeatAppends === undefined ? {} : { repeatAppends: clientOptions.repeatAppends }),
          });
          clients.push(client);
          return client;
        },
      });
    }
    cleanups.push(async () => {
      await Promise.all(clients.map((c) => c.close()));
    });

    const pool = new pg.Pool({ connectionString: db.url, max: 2 });
    // An idle connection dropped by a database restart (failure tests) must not crash the test process.
    pool.on("error", () => undefined);
    cleanups.push(() => pool.end());

    return {
      adapterUrl: adapters[0]!.url,
      adapterUrls: adapters.map((a) => a.url),
      inboundUrl,
      llm,
      db,
      bus,
      names,
      nc,
      modelId: HARNESS_MODEL_ID,
      configPath,
      workers,
      edge: edges[0],
      edges,
      acp,
      createMember,
      ops: { store: store.opsUrl, providerGateway: providerGatewayOps, cursorAdapter: adapters[0]!.opsUrl, edgeProxy: edgeOpsUrl },
      client(clientOptions = {}) {
        const client = new FakeCursorClient({ transport: { baseUrl: adapters[0]!.url }, ...clientOptions });
        clients.push(client);
        return client;
      },
      store(operation, request) {
        const op = STORE_OPERATIONS[operation];
        return busRequest(nc, names.store(op.name), op.request, request as never, op.response, { timeoutMs: 10_000 }) as never;
      },
      async sql<T extends Record<string, unknown>>(text: string, params: unknown[] = []): Promise<T[]> {
        const result = await pool.query(text, params);
        return result.rows as T[];
      },
      startWorker,
      runWorkerEnv,
      providerGatewayEnv,
      stop: cleanup,
    };
  } catch (err) {
    await cleanup().catch(() => undefined);
    throw err;
  }
}
