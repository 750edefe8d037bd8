/**
 * What `npm start` tells the operator: the ready line (where Cursor points,
 * the CA file, the next command), "already running", and the reachable form
 * of a listening address.
 */
import { hostname } from "node:os";
import type { LocalGatewayInfo } from "@byok/platform/local-gateway";

const WILDCARD_HOSTS = new Set(["0.0.0.0", "::", "[::]", ""]);

/** An http URL a client on this machine can use: a wildcard listen host becomes 127.0.0.1. */
export function reachableUrl(url: string): string {
  const parsed = new URL(url);
  if (WILDCARD_HOSTS.has(parsed.hostname)) parsed.hostname = "127.0.0.1";
  return parsed.origin;
}

export function listensOnEveryInterface(url: string): boolean {
  return WILDCARD_HOSTS.has(new URL(url).hostname);
}

export function readyLines(info: {
  proxyUrl: string;
  proxyListen: string;
  caFile: string;
  acpUrl?: string | undefined;
  adminUrl?: string | undefined;
  adminToken: string;
}): string[] {
  const lan = listensOnEveryInterface(`http://${info.proxyListen}`);
  const memberProxy = lan ? `http://${hostname()}:${new URL(info.proxyUrl).port}` : info.proxyUrl;
  return [
    `gateway ready. Cursor proxy: ${info.proxyUrl}${lan ? ` (listening on every interface; members elsewhere use ${memberProxy} or this machine's address)` : " (this machine only; PROXY_HOST=0.0.0.0 opens it to the LAN)"}`,
    `team CA: ${info.caFile} (also served at ${info.proxyUrl}/ca.crt)`,
    ...(info.acpUrl === undefined ? [] : [`ACP editors (Zed, JetBrains): byok-acp acp --gateway ${info.acpUrl.replace(/^ws/, "http")} --key <key> (docs/acp.md)`]),
    `next: npm run admin -- create <name> (or the admin page ${info.adminUrl ?? "(not started)"}, token ${info.adminToken}), then on the member's machine: npm run setup -- --gateway ${memberProxy} --key <key> (proxy ${info.proxyUrl}, team CA ${info.caFile}). Ctrl-C stops the gateway.`,
  ];
}

export function alreadyRunningMessage(path: string, info: LocalGatewayInfo): string {
  const where = [info.proxyUrl && `proxy ${info.proxyUrl}`, info.natsUrl && `NATS ${info.natsUrl}`].filter(Boolean).join(", ");
  return (
    `a gateway is already running on this data directory (pid ${info.pid}, ${info.state} since ${info.startedAt}${where ? `; ${where}` : ""}; see ${path}). ` +
    `Stop it first (Ctrl-C in its terminal, or kill ${info.pid}); a second gateway needs its own DATA_DIR and ports.`
  );
}
