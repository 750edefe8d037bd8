/** @byok/acp-adapter: the service's entry modules (config + start), for the supervisor and tests. */
export { loadConfig } from "./config.ts";
export type { AcpAdapterConfig } from "./config.ts";
export { startAcpAdapter } from "./service.ts";
export type { AcpAdapter, AcpAdapterOverrides } from "./service.ts";
