/**
 * infra/kubernetes, checked without a cluster: every object against the
 * Kubernetes OpenAPI schemas (the `kubernetes-models` package: types,
 * required fields, enums and formats; like the API server without strict
 * field validation, it does not refuse unknown fields), the wiring a cluster
 * would only show at run time (selectors, probe ports, Service targets, the
 * addresses services reach each other at), each container's environment
 * through its service's own `loadConfig`, who gets secrets, and the NATS chart
 * values. When `kubectl` is on PATH, `kubectl kustomize` renders the
 * kustomization too (without its helm chart, which needs helm and the chart
 * repository).
 */
import { copyFileSync, cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseEnv } from "node:util";
import { describe, expect, it } from "vitest";
import { parseAllDocuments, parse, stringify } from "yaml";
import { Namespace } from "kubernetes-models/v1/Namespace";
import { Service } from "kubernetes-models/v1/Service";
import { Deployment } from "kubernetes-models/apps/v1/Deployment";
import { PodDisruptionBudget } from "kubernetes-models/policy/v1/PodDisruptionBudget";
import { loadConfig as loadStoreConfig } from "@byok/store/config";
import { loadConfig as loadProviderGatewayConfig } from "@byok/provider-gateway/config";
import { loadConfig as loadRunWorkerConfig } from "@byok/run-worker/config";
import { loadConfig as loadCursorAdapterConfig } from "@byok/cursor-adapter/config";
import { loadConfig as loadEdgeProxyConfig } from "@byok/edge-proxy/config";
import { loadConfig as loadAcpAdapterConfig } from "@byok/acp-adapter/config";
import { loadConfig as loadAdminConfig } from "@byok/admin/config";

const ROOT = new URL("../", import.meta.url).pathname;
const DIR = join(ROOT, "infra/kubernetes");
const EXAMPLE_CONFIG = readFileSync(join(ROOT, "config/gateway.example.json"), "utf8");

interface KObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
  spec?: Record<string, unknown>;
}
interface Container {
  name: string;
  command?: string[];
  env?: Array<{ name: string; value?: string; valueFrom?: { secretKeyRef?: { name: string; key: string }; fieldRef?: { fieldPath: string } } }>;
  envFrom?: Array<{ secretRef?: { name: string } }>;
  ports?: Array<{ name?: string; containerPort: number }>;
  readinessProbe?: { httpGet?: { path: string; port: string | number; scheme?: string } };
  livenessProbe?: { httpGet?: { path: string; port: string | number; scheme?: string } };
  volumeMounts?: Array<{ name: string; mountPath: string }>;
}
interface DeploymentSpec {
  replicas: number;
  selector: { matchLabels: Record<string, string> };
  template: {
    metadata: { labels: Record<string, string> };
    spec: { containers: Container[]; initContainers?: Container[]; volumes?: Array<{ name: string; secret?: { secretName: string } }> };
  };
}

const MODELS: Record<string, { validate(o: KObject): void }> = {
  "v1/Namespace": { validate: (o) => new Namespace(o as never).validate() },
  "v1/Service": { validate: (o) => new Service(o as never).validate() },
  "apps/v1/Deployment": { validate: (o) => new Deployment(o as never).validate() },
  "policy/v1/PodDisruptionBudget": { validate: (o) => new PodDisruptionBudget(o as never).validate() },
};

const kustomization = parse(readFileSync(join(DIR, "kustomization.yaml"), "utf8")) as {
  resources: string[];
  helmCharts: Array<{ name: string; repo: string; releaseName: string; valuesFile: string }>;
  configMapGenerator: Array<{ name: string; files: string[] }>;
};
const objects: KObject[] = kustomization.resources.flatMap((file) =>
  parseAllDocuments(readFileSync(join(DIR, file), "utf8")).map((d) => d.toJS() as KObject),
);
const deployments = objects.filter((o) => o.kind === "Deployment");
const specOf = (o: KObject): DeploymentSpec => o.spec as unknown as DeploymentSpec;
const containerOf = (name: string): Container => specOf(deployments.find((d) => d.metadata.name === name)!).template.spec.containers[0]!;
const matches = (selector: Record<string, string>, labels: Record<string, string>): boolean => Object.entries(selector).every(([k, v]) => labels[k] === v);

/** The environment a container starts with: its values, a stand-in for each secret or field reference. */
function environmentOf(container: Container): Record<string, string> {
  const env: Record<string, string> = {};
  for (const e of container.env ?? []) {
    if (e.value !== undefined) env[e.name] = e.value;
    else if (e.valueFrom?.secretKeyRef) env[e.name] = e.name === "DATABASE_URL" ? "postgres://byok:secret@postgres.example:5432/byok" : "from-a-secret-of-at-least-24-characters";
    else if (e.valueFrom?.fieldRef) env[e.name] = "run-worker-5d8f7c9b6-abcde";
  }
  return env;
}

describe("infra/kubernetes", () => {
  it("lists every manifest in its kustomization, and each object is valid against the Kubernetes OpenAPI schemas", () => {
    const files = readdirSync(DIR).filter((f) => f.endsWith(".yaml") && f !== "kustomization.yaml" && f !== "nats-values.yaml");
    expect([...kustomization.resources].sort()).toEqual(files.sort());
    expect(objects.length).toBeGreaterThan(10);
    for (const object of objects) {
      const model = MODELS[`${object.apiVersion}/${object.kind}`];
      expect(model, `${object.apiVersion} ${object.kind}`).toBeDefined();
      expect(() => model!.validate(object), `${object.kind} ${object.metadata.name}`).not.toThrow();
    }
  });

  it("is checked for real: a wrong type or a missing required field fails the schema", () => {
    const broken = structuredClone(deployments.find((d) => d.metadata.name === "run-worker")!);
    (broken.spec as Record<string, unknown>)["replicas"] = "three";
    expect(() => new Deployment(broken as never).validate()).toThrow(/replicas/);
    const noSelector = structuredClone(broken);
    delete (noSelector.spec as Record<string, unknown>)["selector"];
    (noSelector.spec as Record<string, unknown>)["replicas"] = 3;
    expect(() => new Deployment(noSelector as never).validate()).toThrow(/selector/);
  });

  it("runs every gateway service with readiness and liveness probes on /healthz of a port the container declares", () => {
    // Every service of the repository runs here.
    const services = readdirSync(join(ROOT, "services"), { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name);
    expect(deployments.map((d) => d.metadata.name).sort()).toEqual(services.sort());
    expect(services).toEqual(expect.arrayContaining(["acp-adapter", "admin", "cursor-adapter", "edge-proxy", "provider-gateway", "run-worker", "store"]));
    for (const d of deployments) {
      const spec = specOf(d);
      expect(matches(spec.selector.matchLabels, spec.template.metadata.labels), d.metadata.name).toBe(true);
      for (const c of spec.template.spec.containers) {
        expect(c.command, d.metadata.name).toEqual(["node", `services/${d.metadata.name}/src/main.ts`]);
        const ports = new Map((c.ports ?? []).map((p) => [p.name, p.containerPort]));
        const env = environmentOf(c);
        expect(ports.get("ops"), d.metadata.name).toBe(Number(env["METRICS_PORT"]));
        for (const probe of [c.readinessProbe, c.livenessProbe]) {
          expect(probe?.httpGet?.path, d.metadata.name).toBe("/healthz");
          expect(ports.has(String(probe?.httpGet?.port)), `${d.metadata.name}: probe port ${probe?.httpGet?.port}`).toBe(true);
        }
      }
    }
    // Services with a listener of their own are ready when it answers: the edge proxy, the HTTP
    // front of the provider gateway, the ACP bridge listener (over its TLS), the admin page.
    const listeners: Array<[string, string, string, string]> = [
      ["edge-proxy", "proxy", "PROXY_PORT", "HTTP"],
      ["provider-gateway", "inbound", "INBOUND_PORT", "HTTP"],
      ["acp-adapter", "acp", "ACP_PORT", "HTTPS"],
      ["admin", "http", "ADMIN_PORT", "HTTP"],
    ];
    for (const [name, port, env, scheme] of listeners) {
      const c = containerOf(name);
      expect(c.readinessProbe?.httpGet?.port, name).toBe(port);
      expect(c.readinessProbe?.httpGet?.scheme ?? "HTTP", name).toBe(scheme);
      expect(c.ports?.find((p) => p.name === port)?.containerPort, name).toBe(Number(environmentOf(c)[env]));
    }
  });

  it("runs workers as a scalable deployment with a disruption budget, and every budget and Service selects one deployment", () => {
    const budgets = objects.filter((o) => o.kind === "PodDisruptionBudget");
    const worker = budgets.find((b) => matches((b.spec as { selector: { matchLabels: Record<string, string> } }).selector.matchLabels, specOf(deployments.find((d) => d.metadata.name === "run-worker")!).template.metadata.labels));
    expect(worker?.spec).toMatchObject({ maxUnavailable: 1 });
    expect(specOf(deployments.find((d) => d.metadata.name === "run-worker")!).replicas).toBeGreaterThan(1);
    for (const b of budgets) {
      const selector = (b.spec as { selector: { matchLabels: Record<string, string> } }).selector.matchLabels;
      expect(deployments.filter((d) => matches(selector, specOf(d).template.metadata.labels)), b.metadata.name).toHaveLength(1);
    }
    for (const s of objects.filter((o) => o.kind === "Service")) {
      const spec = s.spec as { selector: Record<string, string>; ports: Array<{ port: number; targetPort: string }> };
      const selected = deployments.filter((d) => matches(spec.selector, specOf(d).template.metadata.labels));
      expect(selected, s.metadata.name).toHaveLength(1);
      for (const p of spec.ports) expect(specOf(selected[0]!).template.spec.containers[0]!.ports?.some((cp) => cp.name === p.targetPort), `${s.metadata.name}:${p.port}`).toBe(true);
    }
  });

  it("starts each service's own configuration from its container environment, and the addresses point at what is there", () => {
    const readFile = (): string => EXAMPLE_CONFIG;
    loadStoreConfig(environmentOf(containerOf("store")));
    // byok-provider-keys holds what infra/keys.env.example lists (envFrom).
    const keys = parseEnv(readFileSync(join(ROOT, "infra/keys.env.example"), "utf8"));
    loadProviderGatewayConfig({ ...keys, ...environmentOf(containerOf("provider-gateway")) } as Record<string, string>, readFile);
    const worker = loadRunWorkerConfig(environmentOf(containerOf("run-worker")));
    const adapter = loadCursorAdapterConfig(environmentOf(containerOf("cursor-adapter")), readFile);
    const proxy = loadEdgeProxyConfig(environmentOf(containerOf("edge-proxy")), readFile);
    // The ACP adapter listens with TLS from the mounted Secret (its loadConfig refuses plain ws on 0.0.0.0).
    const acpEnv = environmentOf(containerOf("acp-adapter"));
    const acp = loadAcpAdapterConfig(acpEnv, (path) => (path.endsWith(".json") ? EXAMPLE_CONFIG : `PEM of ${path}`));
    expect(acp.tls).toEqual({ certPem: "PEM of /app/tls/tls.crt", keyPem: "PEM of /app/tls/tls.key" });
    const acpMount = containerOf("acp-adapter").volumeMounts?.find((m) => acpEnv["ACP_TLS_CERT_FILE"]?.startsWith(`${m.mountPath}/`));
    const acpVolumes = specOf(deployments.find((d) => d.metadata.name === "acp-adapter")!).template.spec.volumes ?? [];
    expect(acpVolumes.find((v) => v.name === acpMount?.name)?.secret?.secretName).toBe("byok-acp-tls");
    expect(loadAdminConfig(environmentOf(containerOf("admin"))).host).toBe("0.0.0.0");
    const inbound = loadProviderGatewayConfig({ ...keys, ...environmentOf(containerOf("provider-gateway")) } as Record<string, string>, readFile).inbound;
    expect(inbound).toMatchObject({ host: "0.0.0.0", port: 8090 });
    expect([worker.streamReplicas, adapter.streamReplicas]).toEqual([3, 3]);
    // The proxy reaches the adapters' Service on its port; every service reaches NATS at the chart's release.
    const adapterService = objects.find((o) => o.kind === "Service" && o.metadata.name === proxy.adapterOrigin.hostname);
    expect((adapterService?.spec as { ports: Array<{ port: number }> }).ports.map((p) => p.port)).toContain(Number(proxy.adapterOrigin.port));
    for (const d of deployments) expect(new URL(environmentOf(specOf(d).template.spec.containers[0]!)["NATS_URL"]!).hostname, d.metadata.name).toBe(kustomization.helmCharts[0]!.releaseName);
    // The gateway file every service reads is the generated ConfigMap.
    expect(kustomization.configMapGenerator.map((g) => g.name)).toEqual(["byok-gateway-config"]);
  });

  it("gives database credentials only to the store, provider keys only to the provider gateway, the admin token only to admin", () => {
    const secretEnv: Record<string, string[]> = { store: ["DATABASE_URL"], admin: ["ADMIN_TOKEN"] };
    for (const d of deployments) {
      const c = specOf(d).template.spec.containers[0]!;
      const secrets = (c.env ?? []).filter((e) => e.valueFrom?.secretKeyRef).map((e) => e.name);
      expect(secrets, d.metadata.name).toEqual(secretEnv[d.metadata.name] ?? []);
      expect((c.envFrom ?? []).map((e) => e.secretRef?.name), d.metadata.name).toEqual(d.metadata.name === "provider-gateway" ? ["byok-provider-keys"] : []);
    }
  });

  it("takes NATS from the NATS project's chart as a three-server JetStream cluster", () => {
    expect(kustomization.helmCharts).toHaveLength(1);
    expect(kustomization.helmCharts[0]).toMatchObject({ name: "nats", repo: "https://nats-io.github.io/k8s/helm/charts/", releaseName: "nats" });
    const values = parse(readFileSync(join(DIR, kustomization.helmCharts[0]!.valuesFile), "utf8")) as { config: { cluster: { enabled: boolean; replicas: number }; jetstream: { enabled: boolean } } };
    expect(values.config.cluster).toMatchObject({ enabled: true, replicas: 3 });
    expect(values.config.jetstream.enabled).toBe(true);
  });

  it.skipIf(spawnSync("kubectl", ["version", "--client"]).status !== 0)("renders with kubectl kustomize (without the helm chart)", () => {
    const copy = mkdtempSync(join(tmpdir(), "byok-k8s-"));
    try {
      cpSync(DIR, copy, { recursive: true });
      copyFileSync(join(ROOT, "config/gateway.example.json"), join(copy, "gateway.json"));
      const k = parse(readFileSync(join(copy, "kustomization.yaml"), "utf8")) as Record<string, unknown>;
      delete k["helmCharts"];
      writeFileSync(join(copy, "kustomization.yaml"), stringify(k));
      const rendered = spawnSync("kubectl", ["kustomize", copy], { encoding: "utf8" });
      expect(rendered.status, rendered.stderr).toBe(0);
      const out = parseAllDocuments(rendered.stdout).map((d) => d.toJS() as KObject);
      expect(out.filter((o) => o.kind !== "ConfigMap").map((o) => `${o.kind}/${o.metadata.name}`).sort()).toEqual(objects.map((o) => `${o.kind}/${o.metadata.name}`).sort());
      const config = out.find((o) => o.kind === "ConfigMap")!;
      expect(config.metadata.name).toMatch(/^byok-gateway-config-/);
      // The generated name (with its content hash) replaced every reference.
      expect(rendered.stdout).not.toMatch(/name: byok-gateway-config\n/);
      for (const o of out) if (o.kind !== "Namespace") expect((o as KObject & { metadata: { namespace?: string } }).metadata.namespace, `${o.kind}/${o.metadata.name}`).toBe("byok");
    } finally {
      rmSync(copy, { recursive: true, force: true });
    }
  });
});
