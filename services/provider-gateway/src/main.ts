/** Provider gateway process entry point: configuration from the environment, then the service. */
import { ConfigError, createLogger, runService } from "@byok/platform";
import { loadConfig, type ProviderGatewayConfig } from "./config.ts";
import { startProviderGateway } from "./service.ts";

let config: ProviderGatewayConfig;
try {
  config = loadConfig(process.env);
} catch (err) {
  if (!(err instanceof ConfigError)) throw err;
  console.error(err.message);
  process.exit(1);
}
const log = createLogger({ service: "provider-gateway", level: config.logLevel, debugContent: config.debugContent });
await runService("provider-gateway", log, () => startProviderGateway(config, { log }));
