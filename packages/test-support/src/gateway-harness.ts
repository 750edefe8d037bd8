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
 * The config file lives in ./harness-gateway-config.ts and the option and
 * handle types in ./gateway-harness-types.ts; this module re-exports both.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { busNames, RunStatus, STORE_OPERATIONS } from "@byok/contracts";
import { busRequest, connectNats, silentLogger } from "@byok/platform";
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
import { startAcpAdapter } from "@byok/acp-adapter/service";
import { FakeCursorClient } from "./fake-cursor/index.ts";
import type { AcpHandle, EdgeProxyHandle, GatewayHarness, GatewayHarnessOptions, WorkerHandle } from "./gateway-harness-types.ts";
import { HARNESS_MOCK_KEY_ENV, HARNESS_MODEL_ID, writeHarnessGatewayConfig } from "./harness-gateway-config.ts";
import { createTestBus, createTestDatabase, waitFor } from "./infra.ts";
import { startMockLlm } from "./mock-llm.ts";
import { serviceLogger } from "./service-logger.ts";
import { createTestTls } from "./test-tls.ts";

export type { AcpHandle, EdgeProxyHandle, GatewayHarness, GatewayHarnessOptions, OpsUrls, WorkerHandle } from "./gateway-harness-types.ts";
export { HARNESS_MOCK_KEY_ENV, HARNESS_MODEL_ID, writeHarnessGatewayConfig } from "./harness-gateway-config.ts";
export type { HarnessGatewayConfig, HarnessGatewayConfigOptions } from "./harness-gateway-config.ts";

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
      endedRun(runId) {
        const op = STORE_OPERATIONS.getRun;
        return waitFor(async () => {
          const { run } = await busRequest(nc, names.store(op.name), op.request, { runId }, op.response, { timeoutMs: 10_000 });
          return run !== undefined && run.status !== RunStatus.RUNNING ? run : undefined;
        }, `run ${runId} to end in the store`);
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
