/**
 * One log stream for all child processes: every line is prefixed with the
 * child's name. On a terminal, pino JSON lines are shortened to
 * "time level msg key=value..." (LOG_FORMAT=json keeps them raw).
 */

const LEVELS: Record<number, string> = { 10: "trace", 20: "debug", 30: "info", 40: "warn", 50: "error", 60: "fatal" };
const COLORS = [36, 35, 33, 32, 34, 96, 95, 93];
const OMIT = new Set(["level", "time", "msg", "service", "pid", "hostname"]);

export interface LinePrinterOptions {
  /** Colour the prefixes and shorten JSON lines. */
  pretty: boolean;
  names: readonly string[];
}

export type PrintLine = (name: string, line: string) => void;

export function createLinePrinter(options: LinePrinterOptions): PrintLine {
  const width = Math.max(...options.names.map((n) => n.length), 10);
  const colorOf = new Map(options.names.map((n, i) => [n, COLORS[i % COLORS.length]!]));
  return (name, line) => {
    const padded = name.padEnd(width);
    const prefix = options.pretty ? `\u001b[${colorOf.get(name) ?? 37}m${padded}\u001b[0m |` : `${padded} |`;
    process.stdout.write(`${prefix} ${options.pretty ? shorten(line) : line}\n`);
  };
}

function shorten(line: string): string {
  if (!line.startsWith("{")) return line;
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return line;
  }
  const level = typeof entry["level"] === "number" ? (LEVELS[entry["level"]] ?? String(entry["level"])) : String(entry["level"] ?? "");
  const time = typeof entry["time"] === "string" ? entry["time"].slice(11, 23) : "";
  const extras = Object.entries(entry)
    .filter(([k]) => !OMIT.has(k))
    .map(([k, v]) => `${k}=${typeof v === "string" ? v : JSON.stringify(v)}`);
  return [time, level.padEnd(5), String(entry["msg"] ?? ""), ...extras].filter((s) => s !== "").join(" ");
}

/** A pino JSON line's level, `msg` and other fields, if it is one. */
export function logMessage(line: string): { level: number; msg: string; fields: Record<string, unknown> } | undefined {
  if (!line.startsWith("{")) return undefined;
  try {
    const entry = JSON.parse(line) as Record<string, unknown>;
    if (typeof entry["msg"] !== "string") return undefined;
    return { level: typeof entry["level"] === "number" ? entry["level"] : 30, msg: entry["msg"], fields: entry };
  } catch {
    return undefined;
  }
}
