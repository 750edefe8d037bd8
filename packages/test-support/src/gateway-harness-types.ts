/**
 * The shapes of the in-process gateway harness: its options and the handles
 * startGateway (./gateway-harness.ts, which re-exports these) returns.
 */
import type { MessageInitShape, MessageShape } from "@bufbuild/protobuf";
import type { BusNames, RunRecord, StoreOperations } from "@byok/contracts";
import type { NatsConnection } from "@byok/platform";
import type { AcpAdapter } from "@byok/acp-adapter/service";
import type { FakeCursorClient, FakeCursorOptions } from "./fake-cursor/index.ts";
import type { HarnessGatewayConfigOptions } from "./harness-gateway-config.ts";
import type { TestBus, TestDatabase } from "./infra.ts";
import type { MockLlm } from "./mock-llm.ts";
import type { LogCapture } from "./service-logger.ts";

type EnvOverrides = Readonly<Record<string, string>>;

export interface GatewayHarnessOptions extends HarnessGatewayConfigOptions {
  /** Run workers to start (default 1). */
  workers?: number;
  /**
   * Start the provider gateway in-process (default true). false: the test
   * starts its own, e.g. as child processes with `providerGatewayEnv()`.
   */
  providerGateway?: boolean;
  /** Extra environment per service, e.g. { cursorAdapter: { HEARTBEAT_MS: "200" } }. */
  env?: { store?: EnvOverrides; providerGateway?: EnvOverrides; runWorker?: EnvOverrides; cursorAdapter?: EnvOverrides; acpAdapter?: EnvOverrides };
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
  /**
   * The run's record once its end is recorded. A completed run's client may end its stream before
   * run.finish is recorded (the worker sends both at once), so a test reads the end with this.
   */
  endedRun(runId: string): Promise<RunRecord>;
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
