/**
 * docker-compose.yml read the way Docker Compose reads it, for the tests that
 * check the compose wiring without a Docker engine: YAML with merge keys,
 * `${VAR}` / `${VAR:-default}` / `${VAR-default}` / `${VAR:?error}` /
 * `${VAR?error}` / `$VAR` / `$$` interpolation from the project's `.env`, and
 * each service's environment as its container gets it (the image's ENV, then
 * `env_file`, then `environment`).
 */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { parseEnv } from "node:util";
import { parse } from "yaml";

export type ComposeDocument = {
  name?: string;
  services: Record<string, ComposeService>;
  volumes?: Record<string, unknown>;
  [key: string]: unknown;
};

export interface ComposeService {
  image?: string;
  build?: unknown;
  command?: string[] | string;
  environment?: Record<string, string | number | boolean | null> | string[];
  env_file?: string | (string | { path: string; required?: boolean })[];
  ports?: (string | number)[];
  volumes?: (string | { type: string; source?: string; target: string; read_only?: boolean })[];
  depends_on?: string[] | Record<string, { condition?: string }>;
  deploy?: { replicas?: number };
  [key: string]: unknown;
}

/** The YAML as written (merge keys resolved, nothing interpolated): what the schema validates. */
export function readComposeYaml(path: string): ComposeDocument {
  return parse(readFileSync(path, "utf8"), { merge: true }) as ComposeDocument;
}

export class InterpolationError extends Error {
  override readonly name = "InterpolationError";
}

/** The end of a `${...}` that starts at `open` (the index of its `{`), nested `${...}` included. */
function closingBrace(value: string, open: number): number {
  let depth = 0;
  for (let i = open; i < value.length; i++) {
    if (value[i] === "{" && value[i - 1] === "$") depth++;
    else if (value[i] === "}" && --depth === 0) return i;
  }
  throw new InterpolationError(`unclosed \${ in ${value}`);
}

function substitute(expression: string, variables: Readonly<Record<string, string | undefined>>): string {
  const m = /^([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?])([\s\S]*))?$/.exec(expression);
  if (m === null) throw new InterpolationError(`unsupported interpolation \${${expression}}`);
  const [, name, operator, argument = ""] = m as unknown as [string, string, string | undefined, string | undefined];
  const current = variables[name];
  const unset = current === undefined;
  const empty = unset || current === "";
  switch (operator) {
    case undefined:
      return current ?? "";
    case ":-":
      return empty ? interpolate(argument, variables) : current!;
    case "-":
      return unset ? interpolate(argument, variables) : current;
    case ":?":
      if (empty) throw new InterpolationError(`${name}: ${argument || "required variable is missing a value"}`);
      return current!;
    default: // "?"
      if (unset) throw new InterpolationError(`${name}: ${argument || "required variable is not set"}`);
      return current;
  }
}

/** One string interpolated as Compose does. */
export function interpolate(value: string, variables: Readonly<Record<string, string | undefined>>): string {
  let out = "";
  for (let i = 0; i < value.length; i++) {
    const c = value[i];
    if (c !== "$") {
      out += c;
      continue;
    }
    const next = value[i + 1];
    if (next === "$") {
      out += "$";
      i++;
    } else if (next === "{") {
      const close = closingBrace(value, i + 1);
      out += substitute(value.slice(i + 2, close), variables);
      i = close;
    } else {
      const bare = /^[A-Za-z_][A-Za-z0-9_]*/.exec(value.slice(i + 1))?.[0];
      if (bare === undefined) out += "$";
      else {
        out += variables[bare] ?? "";
        i += bare.length;
      }
    }
  }
  return out;
}

function interpolateTree(node: unknown, variables: Readonly<Record<string, string | undefined>>): unknown {
  if (typeof node === "string") return interpolate(node, variables);
  if (Array.isArray(node)) return node.map((item) => interpolateTree(item, variables));
  if (node !== null && typeof node === "object") return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, interpolateTree(v, variables)]));
  return node;
}

export interface ComposeProject {
  /** Directory of docker-compose.yml and `.env`; relative paths resolve against it. */
  dir: string;
  document: ComposeDocument;
}

/** The compose file interpolated with `variables` (what Compose reads from `.env` and the shell). */
export function loadComposeProject(composeFile: string, dir: string, variables: Readonly<Record<string, string | undefined>>): ComposeProject {
  return { dir, document: interpolateTree(readComposeYaml(composeFile), variables) as ComposeDocument };
}

/** `ENV KEY=value` lines of a Dockerfile (the image's environment every container starts from). */
export function dockerfileEnv(dockerfile: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of readFileSync(dockerfile, "utf8").split("\n")) {
    const m = /^ENV\s+([A-Za-z_][A-Za-z0-9_]*)=(\S*)\s*$/.exec(line.trim());
    if (m) env[m[1]!] = m[2]!;
  }
  return env;
}

function envFilePaths(service: ComposeService): { path: string; required: boolean }[] {
  const list = service.env_file === undefined ? [] : Array.isArray(service.env_file) ? service.env_file : [service.env_file];
  return list.map((entry) => (typeof entry === "string" ? { path: entry, required: true } : { path: entry.path, required: entry.required ?? true }));
}

/** The service's container environment: image ENV, then env_file, then environment. */
export function serviceEnvironment(project: ComposeProject, name: string, imageEnv: Readonly<Record<string, string>>): Record<string, string> {
  const service = project.document.services[name];
  if (service === undefined) throw new Error(`no service ${name} in the compose file`);
  const env: Record<string, string> = { ...imageEnv };
  for (const file of envFilePaths(service)) {
    let text: string;
    try {
      text = readFileSync(resolve(project.dir, file.path), "utf8");
    } catch (err) {
      if (file.required) throw new Error(`${name}: env_file ${file.path}: ${(err as Error).message}`, { cause: err });
      continue;
    }
    Object.assign(env, parseEnv(text));
  }
  const environment = service.environment ?? {};
  const entries = Array.isArray(environment)
    ? environment.map((item) => {
        const eq = item.indexOf("=");
        return eq < 0 ? [item, null] : [item.slice(0, eq), item.slice(eq + 1)];
      })
    : Object.entries(environment);
  for (const [key, value] of entries) {
    if (value === null || value === undefined) continue; // taken from the shell: none here
    env[key as string] = String(value);
  }
  return env;
}

export function commandOf(service: ComposeService): string[] {
  if (service.command === undefined) throw new Error("service has no command");
  return Array.isArray(service.command) ? service.command : service.command.split(/\s+/).filter((s) => s !== "");
}

export function dependenciesOf(service: ComposeService): string[] {
  if (service.depends_on === undefined) return [];
  return Array.isArray(service.depends_on) ? service.depends_on : Object.keys(service.depends_on);
}

/** Service names in an order where each comes after what it depends on. */
export function startOrder(document: ComposeDocument): string[] {
  const order: string[] = [];
  const visiting = new Set<string>();
  const visit = (name: string): void => {
    if (order.includes(name)) return;
    if (visiting.has(name)) throw new Error(`depends_on cycle through ${name}`);
    visiting.add(name);
    const service = document.services[name];
    if (service === undefined) throw new Error(`depends_on names an unknown service ${name}`);
    for (const dependency of dependenciesOf(service)) visit(dependency);
    visiting.delete(name);
    order.push(name);
  };
  for (const name of Object.keys(document.services)) visit(name);
  return order;
}

export interface PortMapping {
  published: number | undefined;
  target: number;
}

/** Short-syntax port mappings ("8080", "8080:80", "127.0.0.1:8080:80"). */
export function portsOf(service: ComposeService): PortMapping[] {
  return (service.ports ?? []).map((entry) => {
    const parts = String(entry).split("/")[0]!.split(":");
    const target = Number(parts.at(-1));
    const published = parts.length > 1 ? Number(parts.at(-2)) : undefined;
    return { published, target };
  });
}

export interface Mount {
  kind: "bind" | "volume";
  /** bind: a path relative to the project (or absolute); volume: the volume's name. */
  source: string;
  target: string;
  readOnly: boolean;
}

export function mountsOf(service: ComposeService): Mount[] {
  return (service.volumes ?? []).map((entry) => {
    if (typeof entry === "string") {
      const [source = "", target = "", mode = ""] = entry.split(":");
      const bind = source.startsWith(".") || source.startsWith("/");
      return { kind: bind ? "bind" : "volume", source, target, readOnly: mode.split(",").includes("ro") };
    }
    return { kind: entry.type === "bind" ? "bind" : "volume", source: entry.source ?? "", target: entry.target, readOnly: entry.read_only === true };
  });
}
