import { createLogger, loadConfigOrExit, runService } from "@byok/platform";
import { loadConfig } from "./config.ts";
import { startAdminService } from "./service.ts";

const config = loadConfigOrExit(() => loadConfig(process.env));
const log = createLogger({ service: "admin", level: config.logLevel, debugContent: config.logDebugContent });
await runService("admin", log, () => startAdminService(config, { log }), { endpoints: (s) => ({ url: s.url }) });
