import { createLogger, loadConfigOrExit, runService } from "@byok/platform";
import { loadConfig } from "./config.ts";
import { startAcpAdapter } from "./service.ts";

const config = loadConfigOrExit(() => loadConfig(process.env));
const log = createLogger({ service: "acp-adapter", level: config.logLevel, debugContent: config.logDebugContent });
await runService("acp-adapter", log, () => startAcpAdapter(config, { log }), { endpoints: (adapter) => ({ url: adapter.url }) });
