/**
 * The page's files, read once at start-up and served from memory: the page
 * itself (page/), and Chart.js's self-contained build straight from its npm
 * package (node_modules), so the page needs no internet and no build step.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

export interface StaticAsset {
  readonly body: Buffer;
  readonly contentType: string;
}

const PAGE_DIR = join(import.meta.dirname, "..", "page");

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
};

/** Page files under /assets/ (index.html and login.html are served at / and /login). */
const PAGE_FILES = [
  "app.js",
  "api.js",
  "audit.js",
  "budgets.js",
  "charts.js",
  "directory.js",
  "dom.js",
  "format.js",
  "login.js",
  "members.js",
  "notice.js",
  "overview.js",
  "teams.js",
  "styles.css",
  "favicon.svg",
];

function typeOf(name: string): string {
  const ext = name.slice(name.lastIndexOf("."));
  return TYPES[ext] ?? "application/octet-stream";
}

/** Chart.js's UMD build (defines window.Chart), found through the package's own entry. */
function chartJsFile(): string {
  const entry = createRequire(import.meta.url).resolve("chart.js");
  return join(dirname(entry), "chart.umd.min.js");
}

export interface PageAssets {
  readonly index: StaticAsset;
  readonly login: StaticAsset;
  /** By path under /assets/ (e.g. "app.js", "vendor/chart.umd.min.js"). */
  readonly files: ReadonlyMap<string, StaticAsset>;
}

export function loadPageAssets(): PageAssets {
  const read = (path: string, name: string): StaticAsset => ({ body: readFileSync(path), contentType: typeOf(name) });
  const files = new Map<string, StaticAsset>();
  for (const name of PAGE_FILES) files.set(name, read(join(PAGE_DIR, name), name));
  files.set("vendor/chart.umd.min.js", read(chartJsFile(), "chart.umd.min.js"));
  return { index: read(join(PAGE_DIR, "index.html"), "index.html"), login: read(join(PAGE_DIR, "login.html"), "login.html"), files };
}
