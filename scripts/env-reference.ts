/**
 * docs/environment.md, generated from each service's environment schema (the
 * zod object its loadConfig validates): every variable, its default (what the
 * schema yields when the variable is unset) and its meaning (the doc comment
 * on the variable in the schema's source, or on the shared field in
 * packages/platform).
 *
 *   node scripts/env-reference.ts          rewrite docs/environment.md
 *   node scripts/env-reference.ts --check  fail when docs/environment.md is not what the schemas say (npm run check)
 */
import { readFileSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";
import ts from "typescript";
import type { z } from "zod";

const ROOT = resolve(import.meta.dirname, "..");
const OUTPUT = "docs/environment.md";

interface SchemaSource {
  /** Heading in the reference. */
  title: string;
  /** The module that exports the schema (relative to the repository). */
  module: string;
  exportName: string;
  /** Who reads it. */
  summary: string;
}

const SOURCES: readonly SchemaSource[] = [
  { title: "store", module: "services/store/src/config.ts", exportName: "storeEnvSchema", summary: "Postgres and the store's request/reply API on the bus. The only process with database credentials." },
  { title: "provider-gateway", module: "services/provider-gateway/src/config.ts", exportName: "providerGatewayEnvSchema", summary: "Model calls to the providers. The only process with provider keys: each provider's `apiKeyEnv` in the gateway configuration names a variable of this process." },
  { title: "run-worker", module: "services/run-worker/src/config.ts", exportName: "schema", summary: "The agent loop; run as many as you like (each takes up to MAX_CONCURRENT_RUNS runs)." },
  { title: "cursor-adapter", module: "services/cursor-adapter/src/config.ts", exportName: "envSchema", summary: "Cursor's agent protocol; one instance (the edge proxy sends every request of a run to it)." },
  { title: "acp-adapter", module: "services/acp-adapter/src/config.ts", exportName: "envSchema", summary: "The Agent Client Protocol for Zed, JetBrains and other ACP editors; the member-side bridge (`byok-acp`) connects to ACP_HOST:ACP_PORT over WebSocket (docs/acp.md)." },
  { title: "edge-proxy", module: "services/edge-proxy/src/config.ts", exportName: "edgeProxyEnvSchema", summary: "The HTTP proxy members' Cursor uses; also serves GET /healthz and GET /ca.crt on its port." },
  { title: "admin", module: "services/admin/src/config.ts", exportName: "adminServiceEnvSchema", summary: "The admin page and its HTTP API (admin token only), reading and writing through the store." },
  { title: "admin CLI (`npm run admin`)", module: "services/admin/src/cli/config.ts", exportName: "adminEnvSchema", summary: "Member keys and usage. Without NATS_URL it uses the gateway `npm start` runs (DATA_DIR/local-gateway.json)." },
];

/** Files whose doc comments describe shared variables (the service's own file is searched first). */
const SHARED_SOURCES = ["packages/platform/src/config.ts", "packages/platform/src/metrics.ts"];

/** Doc comments of `NAME: ...` properties in a source file, by name. */
function docComments(file: string): Map<string, string> {
  const text = readFileSync(resolve(ROOT, file), "utf8");
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found = new Map<string, string>();
  const visit = (node: ts.Node): void => {
    if (ts.isPropertyAssignment(node) && (ts.isIdentifier(node.name) || ts.isStringLiteral(node.name)) && /^[A-Z][A-Z0-9_]*$/.test(node.name.text)) {
      const comment = ts
        .getJSDocCommentsAndTags(node)
        .map((doc) => (ts.isJSDoc(doc) ? ts.getTextOfJSDocComment(doc.comment) ?? "" : ""))
        .join(" ")
        .replace(/\s+/g, " ")
        .trim();
      if (comment !== "" && !found.has(node.name.text)) found.set(node.name.text, comment);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

function formatDefault(value: unknown): string {
  if (value === undefined) return "unset";
  if (value instanceof URL) return `\`${value.href.replace(/\/$/, "")}\``;
  if (Array.isArray(value)) return `\`${value.join(",")}\``;
  if (typeof value === "boolean") return value ? "`1`" : "`0`";
  if (typeof value === "string" && /^\/|:\\/.test(value) && value.startsWith(ROOT)) return `\`${value.slice(ROOT.length + 1)}\` (in the repository)`;
  return `\`${String(value)}\``;
}

function cell(text: string): string {
  return text.replace(/\|/g, "\\|");
}

async function render(): Promise<string> {
  const shared = SHARED_SOURCES.map(docComments);
  const sections: string[] = [];
  for (const source of SOURCES) {
    const module = (await import(resolve(ROOT, source.module))) as Record<string, unknown>;
    const schema = module[source.exportName] as z.ZodObject | undefined;
    if (schema === undefined || typeof schema !== "object" || !("shape" in schema)) throw new Error(`${source.module} exports no zod object ${source.exportName}`);
    const own = docComments(source.module);
    const rows = Object.entries(schema.shape as Record<string, z.ZodType>).map(([name, field]) => {
      const unset = field.safeParse(undefined);
      const fallback = unset.success ? formatDefault(unset.data) : "**required**";
      const meaning = own.get(name) ?? shared.find((m) => m.has(name))?.get(name) ?? "";
      return `| \`${name}\` | ${cell(fallback)} | ${cell(meaning)} |`;
    });
    sections.push([`## ${source.title}`, "", source.summary, "", "| variable | default | meaning |", "|---|---|---|", ...rows, ""].join("\n"));
  }
  return [
    "# Environment reference",
    "",
    "Generated from the services' configuration schemas by `node scripts/env-reference.ts`; `npm run check` fails",
    "when this page and the schemas disagree. Durations are whole milliseconds. Every service refuses to start on an",
    "invalid value and names the variable. `npm start` adds its own variables (README.md, `npm start` details) and",
    "hands every other variable of its environment to every service.",
    "",
    ...sections,
  ].join("\n");
}

const check = process.argv.includes("--check");
const rendered = await render();
const path = resolve(ROOT, OUTPUT);
if (check) {
  let current = "";
  try {
    current = readFileSync(path, "utf8");
  } catch {
    // missing: stale
  }
  if (current !== rendered) {
    console.error(`${OUTPUT} is out of date with the configuration schemas: run node scripts/env-reference.ts and commit the result.`);
    process.exit(1);
  }
  console.log(`${OUTPUT} is up to date`);
} else {
  writeFileSync(path, rendered);
  console.log(`wrote ${OUTPUT}`);
}
