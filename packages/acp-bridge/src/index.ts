/**
 * @byok/acp-bridge: the member-side ACP command (main.ts is the bin). Its
 * parts are exported for tests.
 */
export { LINK_PATH, USAGE, parseBridgeArgs } from "./args.ts";
export type { BridgeArgs, ParsedArgs } from "./args.ts";
export { Bridge } from "./bridge.ts";
export type { BridgeLink, BridgePorts } from "./bridge.ts";
export { GatewayLink } from "./gateway-link.ts";
export type { GatewayLinkOptions, LinkEvent } from "./gateway-link.ts";
