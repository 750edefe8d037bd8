/** Provider gateway process entry point: configuration from the environment, then the service. */
import { createLogger, loadConfigOrExit, runService } from "@byok/platform";
import { loadConfig } from "./config.ts";
import { startProviderGateway } from "./service.ts";

const config = loadConfigOrExit(() => loadConfig(process.env));
const log = createLogger({ service: "provider-gateway", level: config.logLevel, debugContent: config.logDebugContent });
await runService("provider-gateway", log, () => startProviderGateway(config, { log }));
