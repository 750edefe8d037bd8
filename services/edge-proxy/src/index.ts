export { startEdgeProxy, type EdgeProxy, type EdgeProxyDeps } from "./service.ts";
export { loadConfig, type EdgeProxyConfig } from "./config.ts";
export type { MemberDirectory, MemberLookup } from "./member-store.ts";
