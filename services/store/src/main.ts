import { createLogger, loadConfigOrExit, runService } from "@byok/platform";
import { loadConfig } from "./config.ts";
import { startStore } from "./service.ts";

const config = loadConfigOrExit(() => loadConfig(process.env));
const log = createLogger({ service: "store", level: config.logLevel, debugContent: config.logDebugContent });
await runService("store", log, () => startStore(config, { log }));
