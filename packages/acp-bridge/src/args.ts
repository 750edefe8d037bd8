/**
 * The bridge's command line: `byok-acp acp --gateway https://host:port --key <member key> [--ca <file>]`.
 * Each flag has an environment fallback (BYOK_GATEWAY_URL, BYOK_MEMBER_KEY,
 * BYOK_CA_FILE), so a key need not appear in the editor's settings or the
 * process list. Pure: main.ts passes argv and the environment.
 */

export interface BridgeArgs {
  /** The gateway's ACP endpoint as a WebSocket URL (wss://host:port/acp). */
  readonly url: URL;
  readonly key: string;
  /** A PEM file with the team's CA certificate, trusted in addition to the system's roots. */
  readonly caFile: string | undefined;
}

export type ParsedArgs = { readonly kind: "ok"; readonly args: BridgeArgs } | { readonly kind: "usage"; readonly message: string };

export const USAGE = `usage: byok-acp acp --gateway https://<gateway host>:<port> --key <member key> [--ca <team CA PEM file>]
  environment instead of flags: BYOK_GATEWAY_URL, BYOK_MEMBER_KEY, BYOK_CA_FILE
  http:// is accepted for a gateway on this machine (127.0.0.1, ::1, localhost) only.`;

/** The path the gateway's ACP adapter serves the bridge link on. */
export const LINK_PATH = "/acp";

const LOOPBACK = new Set(["127.0.0.1", "[::1]", "localhost"]);

export function parseBridgeArgs(argv: readonly string[], env: Readonly<Record<string, string | undefined>>): ParsedArgs {
  const [command, ...rest] = argv;
  if (command !== "acp") return { kind: "usage", message: command === undefined ? USAGE : `unknown command ${JSON.stringify(command)}\n${USAGE}` };
  const flags = new Map<string, string>();
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i] ?? "";
    const eq = arg.indexOf("=");
    const name = eq > 0 ? arg.slice(0, eq) : arg;
    if (name !== "--gateway" && name !== "--key" && name !== "--ca") return { kind: "usage", message: `unknown option ${JSON.stringify(arg)}\n${USAGE}` };
    const value = eq > 0 ? arg.slice(eq + 1) : rest[++i];
    if (value === undefined || value === "") return { kind: "usage", message: `${name} needs a value\n${USAGE}` };
    flags.set(name, value);
  }
  const gateway = flags.get("--gateway") ?? env["BYOK_GATEWAY_URL"] ?? "";
  const key = flags.get("--key") ?? env["BYOK_MEMBER_KEY"] ?? "";
  const caFile = flags.get("--ca") ?? (env["BYOK_CA_FILE"] || undefined);
  if (gateway === "") return { kind: "usage", message: `the gateway URL is missing (--gateway or BYOK_GATEWAY_URL)\n${USAGE}` };
  if (key === "") return { kind: "usage", message: `the member key is missing (--key or BYOK_MEMBER_KEY)\n${USAGE}` };
  let url: URL;
  try {
    url = new URL(gateway);
  } catch {
    return { kind: "usage", message: `--gateway ${JSON.stringify(gateway)} is not a URL\n${USAGE}` };
  }
  if (url.protocol === "https:") url.protocol = "wss:";
  else if (url.protocol === "http:" && LOOPBACK.has(url.hostname)) url.protocol = "ws:";
  else return { kind: "usage", message: `--gateway must be an https:// URL (http:// only for this machine), got ${JSON.stringify(gateway)}\n${USAGE}` };
  url.pathname = LINK_PATH;
  url.search = "";
  url.hash = "";
  return { kind: "ok", args: { url, key, caFile } };
}
