/**
 * Entry point: `node services/edge-proxy/src/main.ts` runs the proxy. (Member
 * keys and member setup are the admin CLI's: services/admin/src/cli.)
 */
import { createLogger, loadConfigOrExit, runService } from "@byok/platform";
import { loadConfig } from "./config.ts";
import { startEdgeProxy } from "./service.ts";

const config = loadConfigOrExit(() => loadConfig(process.env));
const log = createLogger({ service: "edge-proxy", level: config.logLevel, debugContent: config.logDebugContent });
await runService("edge-proxy", log, () => startEdgeProxy(config, { log }), { endpoints: (proxy) => ({ url: proxy.url, caFile: proxy.caCertFile }) });
