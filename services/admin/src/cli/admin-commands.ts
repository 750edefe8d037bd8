/**
 * `npm run admin -- <command>`: parsing against the command table
 * (command-table.ts) and running the command's admin action through the store.
 *
 * `--json` prints the action's result as JSON on stdout (what the admin API
 * answers). Every error names the gateway address the command used
 * (gateway-target.ts).
 */
import { parseArgs } from "node:util";
import { StoreFailure } from "@byok/store-client";
import { ActionInputError, runAction, type AdminStore } from "../actions/admin-actions.ts";
import { CLI_COMMANDS, usageLine, type CliCommand, type Flags } from "./command-table.ts";

export interface CliIo {
  out(text: string): void;
  err(text: string): void;
}

const GLOBAL_OPTIONS = {
  json: { type: "boolean", default: false },
  help: { type: "boolean", short: "h", default: false },
  "nats-url": { type: "string" },
  "bus-prefix": { type: "string" },
} as const;

export const ADMIN_USAGE = [
  "usage: npm run admin -- <command> [--json] [--nats-url <url> [--bus-prefix <prefix>]]",
  "",
  ...CLI_COMMANDS.filter((c) => !c.alias).map((c) => `  ${usageLine(c).padEnd(62)} ${c.summary}`),
  "",
  "  create, list and revoke without `member` still work. Times: an RFC 3339 time, or a date YYYY-MM-DD",
  "  meaning 00:00 UTC (so --until 2026-02-01 ends with January 31).",
  "  The gateway: --nats-url, else NATS_URL (compose: docker compose exec admin npm run admin -- ...),",
  "  else the gateway npm start runs from this repository (.data/local-gateway.json, or DATA_DIR).",
].join("\n");

export interface AdminCommand {
  readonly spec: CliCommand;
  readonly args: readonly string[];
  readonly flags: Flags;
}

export type ParsedAdminArgs =
  | { kind: "command"; command: AdminCommand; json: boolean; natsUrl: string | undefined; busPrefix: string | undefined }
  | { kind: "help"; natsUrl: string | undefined; busPrefix: string | undefined }
  | { kind: "invalid"; message: string };

/** The command whose words start `positionals` (the longest match). */
function findCommand(positionals: readonly string[]): CliCommand | undefined {
  let best: CliCommand | undefined;
  for (const c of CLI_COMMANDS) {
    if (c.words.every((w, i) => positionals[i] === w) && (best === undefined || c.words.length > best.words.length)) best = c;
  }
  return best;
}

export function parseAdminArgs(argv: readonly string[]): ParsedAdminArgs {
  const invalid = (message: string): ParsedAdminArgs => ({ kind: "invalid", message });
  // A first pass finds the command words and the global flags; the second checks the command's own flags.
  let loose;
  try {
    loose = parseArgs({ args: [...argv], options: GLOBAL_OPTIONS, allowPositionals: true, strict: false });
  } catch (err) {
    return invalid((err as Error).message);
  }
  const target = { natsUrl: loose.values["nats-url"] as string | undefined, busPrefix: loose.values["bus-prefix"] as string | undefined };
  if (loose.values.help === true) return { kind: "help", ...target };
  if (loose.positionals.length === 0) return invalid("no command given");
  const spec = findCommand(loose.positionals);
  if (spec === undefined) return invalid(`unknown command ${loose.positionals.slice(0, 2).join(" ")}`);
  const flagOptions = Object.fromEntries(Object.entries(spec.flags).map(([name, f]) => [name, { type: f.type }]));
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], options: { ...GLOBAL_OPTIONS, ...flagOptions }, allowPositionals: true, strict: true });
  } catch (err) {
    return invalid(`${spec.words.join(" ")}: ${(err as Error).message}`);
  }
  const args = parsed.positionals.slice(spec.words.length);
  if (args.length < spec.args.length) return invalid(`${spec.words.join(" ")} needs ${spec.args.slice(args.length).join(" ")}`);
  if (args.length > spec.args.length) return invalid(`unexpected arguments: ${args.slice(spec.args.length).join(" ")}`);
  return { kind: "command", command: { spec, args, flags: parsed.values as Flags }, json: parsed.values.json === true, ...target };
}

/** JSON with int64 counters as numbers. */
function json(value: unknown): string {
  return `${JSON.stringify(value, (_k, v: unknown) => (typeof v === "bigint" ? Number(v) : v), 2)}\n`;
}

/**
 * Runs one command against `store`; returns the exit code (0 ok, 1 failed,
 * 2 bad input). A failed store call is reported on stderr (and as
 * {"error": ...} on stdout with --json), naming `where`.
 */
export async function runAdminCommand(command: AdminCommand, store: AdminStore, io: CliIo, options: { json: boolean; where: string }): Promise<number> {
  const { spec } = command;
  try {
    const result = await runAction(spec.action, store, spec.input(command.args, command.flags));
    io.out(options.json ? json(result) : (spec.text as (r: unknown) => string)(result));
    return 0;
  } catch (err) {
    if (err instanceof ActionInputError) {
      if (options.json) io.out(json({ error: { kind: "invalid", message: err.message } }));
      io.err(`admin: ${spec.words.join(" ")}: ${err.message}\nusage: npm run admin -- ${usageLine(spec)}\n`);
      return 2;
    }
    if (!(err instanceof StoreFailure)) throw err;
    const text =
      err.kind === "not_found"
        ? `not found at ${options.where}: ${err.detail}`
        : err.kind === "unavailable"
          ? `the gateway's store did not answer at ${options.where}: ${err.detail}`
          : `failed at ${options.where}: ${err.message}`;
    if (options.json) io.out(json({ error: { kind: err.kind, message: text } }));
    io.err(`admin: ${text}\n`);
    return 1;
  }
}
