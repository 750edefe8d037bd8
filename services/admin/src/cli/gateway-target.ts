/**
 * Which gateway an admin command talks to, and how it was found, so that
 * every message can name the address: `--nats-url` (and `--bus-prefix`), else
 * NATS_URL (and BUS_PREFIX) from the environment (compose containers), else
 * the gateway `npm start` runs from this repository (its local-gateway.json).
 * With none of these the command stops and says so; it never guesses.
 */
import { readLocalGateway, type LocalGatewayState } from "@byok/platform/local-gateway";
import type { AdminCliConfig } from "./config.ts";

export type GatewayTarget =
  | { kind: "found"; natsUrl: string; busPrefix: string; source: string }
  | { kind: "none"; message: string };

export interface TargetFlags {
  natsUrl: string | undefined;
  busPrefix: string | undefined;
}

/** The NATS URL without credentials, for messages. */
export function displayUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.username === "" && u.password === "") return url;
    u.username = "";
    u.password = "";
    return u.toString().replace(/\/$/, "");
  } catch {
    return url;
  }
}

export function describeTarget(target: Extract<GatewayTarget, { kind: "found" }>): string {
  return `${displayUrl(target.natsUrl)} (bus prefix ${target.busPrefix}, from ${target.source})`;
}

export function resolveTarget(flags: TargetFlags, config: AdminCliConfig, readState: (dataDir: string) => LocalGatewayState = readLocalGateway): GatewayTarget {
  if (flags.natsUrl !== undefined) return { kind: "found", natsUrl: flags.natsUrl, busPrefix: flags.busPrefix ?? config.busPrefix ?? "byok", source: "--nats-url" };
  if (config.natsUrl !== undefined) return { kind: "found", natsUrl: config.natsUrl, busPrefix: flags.busPrefix ?? config.busPrefix ?? "byok", source: "NATS_URL" };
  const state = readState(config.dataDir);
  switch (state.kind) {
    case "running":
      if (state.info.natsUrl !== undefined && state.info.state === "running") {
        return { kind: "found", natsUrl: state.info.natsUrl, busPrefix: flags.busPrefix ?? state.info.busPrefix ?? "byok", source: state.path };
      }
      return { kind: "none", message: `the gateway in ${state.path} (pid ${state.info.pid}) is still starting; try again when npm start prints "gateway ready"` };
    case "stale":
      return { kind: "none", message: `no gateway is running: ${state.path} is left from pid ${state.info.pid}, which has exited. Start it with npm start, or pass --nats-url` };
    case "unreadable":
      return { kind: "none", message: `cannot read ${state.path} (${state.message}); pass --nats-url or set NATS_URL` };
    case "none":
      return {
        kind: "none",
        message: `no running gateway found: ${state.path} does not exist (is npm start running from this repository, with the same DATA_DIR?) and NATS_URL is not set. Start the gateway, or pass --nats-url <url> [--bus-prefix <prefix>]`,
      };
  }
}
