/**
 * `npm run proxy:setup -- --key <member key> [--proxy-url http://gateway:8080]
 * [--name <name>] [--out <file>]`: prints the Cursor settings a member applies
 * (proxy with the key, proxy support on, HTTP/2 off, system certificates) and
 * writes the team CA certificate for installation into the OS trust store.
 */
import { writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { silentLogger } from "@byok/platform";
import { fingerprint, loadOrCreateCa } from "../ca.ts";
import type { EdgeProxyConfig } from "../config.ts";

export interface CliIo {
  out(text: string): void;
  err(text: string): void;
}

export interface CursorSettingsInput {
  /** Proxy URL without credentials, e.g. http://gateway.example:8080. */
  proxyUrl: string;
  name: string;
  key: string;
}

/** The Cursor user settings (settings.json keys) that route Cursor through the gateway. */
export function cursorSettings(input: CursorSettingsInput): Record<string, string | boolean> {
  const url = new URL(input.proxyUrl);
  url.username = encodeURIComponent(input.name);
  url.password = encodeURIComponent(input.key);
  return {
    "http.proxy": url.toString().replace(/\/$/, ""),
    "http.proxySupport": "on",
    "cursor.general.disableHttp2": true,
    "http.experimental.systemCertificatesV2": true,
  };
}

export function defaultProxyUrl(config: EdgeProxyConfig): string | undefined {
  const host = config.host;
  if (host === "0.0.0.0" || host === "::") return undefined;
  return `http://${host.includes(":") ? `[${host}]` : host}:${config.port}`;
}

function trustInstructions(caPath: string): string {
  return [
    "Install the team CA (once per machine):",
    `  macOS:   sudo security add-trusted-cert -d -r trustRoot -p ssl -k /Library/Keychains/System.keychain "${caPath}"`,
    `  Windows: certutil -addstore -f Root "${caPath}"`,
    `  Linux:   sudo cp "${caPath}" /usr/local/share/ca-certificates/byok-gateway-ca.crt && sudo update-ca-certificates`,
    "The CA can only sign certificates for the intercepted domains (name constraints).",
  ].join("\n");
}

const USAGE = "usage: npm run proxy:setup -- --key <member key> [--proxy-url http://host:port] [--name <name>] [--out <ca file>]";

export async function runSetup(args: readonly string[], config: EdgeProxyConfig, io: CliIo): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args: [...args],
      options: {
        key: { type: "string" },
        "proxy-url": { type: "string" },
        name: { type: "string", default: "member" },
        out: { type: "string", default: "byok-gateway-ca.crt" },
      },
      strict: true,
    }));
  } catch (err) {
    io.err(`${(err as Error).message}\n${USAGE}\n`);
    return 2;
  }
  if (!values.key) {
    io.err(`--key is required (create one with: npm run proxy:admin -- create <name>)\n${USAGE}\n`);
    return 2;
  }
  const proxyUrl = values["proxy-url"] ?? defaultProxyUrl(config);
  if (!proxyUrl) {
    io.err(`the proxy listens on ${config.host}; pass --proxy-url with the address members reach it at\n${USAGE}\n`);
    return 2;
  }
  try {
    new URL(proxyUrl);
  } catch {
    io.err(`--proxy-url is not a URL: ${proxyUrl}\n`);
    return 2;
  }
  const { ca } = await loadOrCreateCa(config.caDir, config.interceptDomains, silentLogger());
  const caPath = resolve(values.out);
  writeFileSync(caPath, ca.certPem, { mode: 0o644 });
  const settings = cursorSettings({ proxyUrl, name: values.name, key: values.key });
  io.out(
    [
      "Add these keys to Cursor's user settings.json (Cursor: Preferences > Open User Settings (JSON)), then restart Cursor:",
      JSON.stringify(settings, null, 2),
      "",
      `Team CA certificate written to ${caPath}`,
      `SHA-256 fingerprint: ${await fingerprint(ca.cert)}`,
      trustInstructions(caPath),
      "",
    ].join("\n"),
  );
  return 0;
}
