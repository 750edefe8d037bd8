import { ConfigError, createLogger, runService } from "@byok/platform";
import { loadConfig, type CursorAdapterConfig } from "./config.ts";
import { startCursorAdapter } from "./service.ts";

let config: CursorAdapterConfig;
try {
  config = loadConfig(process.env);
} catch (err) {
  if (!(err instanceof ConfigError)) throw err;
  console.error(err.message);
  process.exit(1);
}
const log = createLogger({ service: "cursor-adapter", level: config.logLevel, debugContent: config.logDebugContent });
await runService("cursor-adapter", log, () => startCursorAdapter(config, { log }));
