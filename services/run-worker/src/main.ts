import { createLogger, loadConfigOrExit, runService } from "@byok/platform";
import { loadConfig } from "./config.ts";
import { startRunWorker } from "./service.ts";

const config = loadConfigOrExit(() => loadConfig(process.env));
const log = createLogger({ service: "run-worker", level: config.logLevel, debugContent: config.logDebugContent });
await runService("run-worker", log, () => startRunWorker(config, { log }));
