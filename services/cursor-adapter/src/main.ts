import { createLogger, loadConfigOrExit, runService } from "@byok/platform";
import { loadConfig } from "./config.ts";
import { startCursorAdapter } from "./service.ts";

const config = loadConfigOrExit(() => loadConfig(process.env));
const log = createLogger({ service: "cursor-adapter", level: config.logLevel, debugContent: config.logDebugContent });
await runService("cursor-adapter", log, () => startCursorAdapter(config, { log }), { endpoints: (adapter) => ({ url: adapter.url }) });
