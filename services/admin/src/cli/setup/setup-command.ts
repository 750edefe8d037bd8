/**
 * `npm run setup -- --key <key> [--gateway http://host:port] ...`: a member's
 * machine set up for the gateway. It downloads the team CA (the gateway's
 * /ca.crt, or --ca-url), checks the key and the CA against the proxy
 * (gateway-check.ts) before it prints anything, saves the CA outside the
 * repository (a per-user config directory, or --ca-out), then prints the
 * Cursor settings, or applies them with --apply-cursor-settings (settings.json
 * backed up first), and prints the trust-store command, or runs it with
 * --install-ca where it can (trust-store.ts).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { parseArgs } from "node:util";
import type { LocalGatewayState } from "@byok/platform/local-gateway";
import type { CliIo } from "../admin-commands.ts";
import { applyCursorSettings, cursorSettings, cursorSettingsPath } from "./cursor-settings.ts";
import { checkThroughProxy, downloadCa, type ProxyCheck } from "./gateway-check.ts";
import { trustPlan, type TrustHost } from "./trust-store.ts";

export const SETUP_USAGE = [
  "usage: npm run setup -- --key <member key> [--gateway http://<gateway host>:<port>] [--name <name>]",
  "         [--ca-url <url>] [--ca-out <file>] [--apply-cursor-settings [--cursor-settings <settings.json>]] [--install-ca]",
  "  --gateway      the edge proxy (the admin tells you; default on the gateway machine: the running npm start gateway)",
  "  --ca-url       where to download the team CA (default <gateway>/ca.crt)",
  "  --apply-cursor-settings  write the settings into Cursor's settings.json (a backup is made first)",
  "  --install-ca   add the CA to this system's trust store (prints the command when it cannot run it)",
].join("\n");

export interface SetupHost extends TrustHost {
  env: Readonly<Record<string, string | undefined>>;
  /** The gateway `npm start` runs on this machine, if any. */
  localGateway(): LocalGatewayState;
  /** Runs a command; throws when it fails. */
  run(argv: readonly string[]): void;
}

/** Where the CA is kept on this machine (per user, outside any repository). */
export function defaultCaPath(host: Pick<SetupHost, "platform" | "env" | "home">): string {
  const base =
    host.platform === "win32"
      ? (host.env["APPDATA"] ?? join(host.home, "AppData", "Roaming"))
      : host.platform === "darwin"
        ? join(host.home, "Library", "Application Support")
        : host.env["XDG_CONFIG_HOME"] || join(host.home, ".config");
  return join(base, "byok-gateway", "ca.crt");
}

function checkFailure(check: Exclude<ProxyCheck, { kind: "ok" }>, gateway: string): string {
  switch (check.kind) {
    case "key_refused":
      return `the gateway at ${gateway} refused this key (HTTP ${check.status}): check it, or ask the admin for a new one (npm run admin -- create <name>)`;
    case "ca_mismatch":
      return `${check.message}: the CA does not belong to the gateway at ${gateway} (wrong --ca-url, or the gateway's CA changed)`;
    case "unreachable":
      return `cannot reach the gateway's proxy: ${check.message}`;
    case "unexpected":
      return check.message;
  }
}

export async function runSetup(args: readonly string[], host: SetupHost, io: CliIo): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args: [...args],
      options: {
        key: { type: "string" },
        gateway: { type: "string" },
        "proxy-url": { type: "string" },
        name: { type: "string", default: "member" },
        "ca-url": { type: "string" },
        "ca-out": { type: "string" },
        "apply-cursor-settings": { type: "boolean", default: false },
        "cursor-settings": { type: "string" },
        "install-ca": { type: "boolean", default: false },
        help: { type: "boolean", short: "h", default: false },
      },
      strict: true,
    }));
  } catch (err) {
    io.err(`setup: ${(err as Error).message}\n${SETUP_USAGE}\n`);
    return 2;
  }
  if (values.help) {
    io.out(`${SETUP_USAGE}\n`);
    return 0;
  }
  if (!values.key) {
    io.err(`setup: --key is required (the admin creates one with: npm run admin -- create <name>)\n${SETUP_USAGE}\n`);
    return 2;
  }
  const local = host.localGateway();
  const gatewayArg = values.gateway ?? values["proxy-url"] ?? (local.kind === "running" ? local.info.proxyUrl : undefined);
  if (gatewayArg === undefined) {
    io.err(`setup: pass --gateway http://<gateway host>:<port> (the address of the gateway's edge proxy; the admin tells you)\n${SETUP_USAGE}\n`);
    return 2;
  }
  let gateway: string;
  try {
    const url = new URL(gatewayArg);
    if (url.protocol !== "http:") throw new Error("not http");
    gateway = url.origin;
  } catch {
    io.err(`setup: --gateway must be an http:// URL such as http://gateway.example:8080 (got ${gatewayArg})\n`);
    return 2;
  }

  const caUrl = values["ca-url"] ?? `${gateway}/ca.crt`;
  const ca = await downloadCa(caUrl);
  if (ca.kind === "failed") {
    io.err(`setup: ${ca.message}\n`);
    return 1;
  }
  const check = await checkThroughProxy(gateway, { name: values.name, key: values.key }, ca.pem);
  if (check.kind !== "ok") {
    io.err(`setup: ${checkFailure(check, gateway)}\n`);
    return 1;
  }

  const caPath = resolve(values["ca-out"] ?? defaultCaPath(host));
  mkdirSync(dirname(caPath), { recursive: true });
  writeFileSync(caPath, ca.pem, { mode: 0o644 });
  const settings = cursorSettings({ proxyUrl: gateway, name: values.name, key: values.key });
  const lines = [`Gateway ${gateway} accepted the key; its team CA (SHA-256 ${ca.fingerprint}) is saved in ${caPath}.`, ""];

  const settingsPath = values["cursor-settings"] ?? cursorSettingsPath(host.platform, host.env, host.home);
  if (values["apply-cursor-settings"]) {
    const applied = applyCursorSettings(settingsPath, settings);
    if (applied.kind === "unreadable") {
      io.err(`setup: ${applied.path}: ${applied.message}\n`);
      return 1;
    }
    lines.push(`Cursor settings written to ${applied.path}${applied.backup ? ` (previous file: ${applied.backup})` : ""}; restart Cursor.`);
  } else {
    lines.push(`Add these keys to Cursor's settings.json (${settingsPath}; Cursor: Preferences > Open User Settings (JSON)), then restart Cursor:`, JSON.stringify(settings, null, 2));
    lines.push("(or run setup again with --apply-cursor-settings)");
  }
  lines.push("");

  const plan = trustPlan(host, caPath);
  if (plan.kind === "unsupported") {
    lines.push(`Team CA: ${plan.message}.`);
  } else if (!values["install-ca"]) {
    lines.push(`Install the team CA into the system trust store (once per machine; or run setup with --install-ca):`, `  ${plan.display}`);
  } else if (plan.needsRoot && !host.isRoot) {
    lines.push(`Installing the team CA needs administrator rights; run:`, `  ${plan.display}`);
  } else {
    try {
      for (const step of plan.steps) host.run(step);
      lines.push("Team CA installed into the system trust store.");
    } catch (err) {
      lines.push(`Installing the team CA failed (${(err as Error).message}); run it yourself:`, `  ${plan.display}`);
    }
  }
  lines.push("The CA can only sign certificates for the intercepted Cursor domains (name constraints).", "");
  io.out(lines.join("\n"));
  return 0;
}
