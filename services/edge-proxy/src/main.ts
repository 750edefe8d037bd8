/**
 * Entry point: `node services/edge-proxy/src/main.ts` runs the proxy;
 * `… main.ts setup …` and `… main.ts admin …` run the member commands
 * (npm scripts proxy:setup / proxy:admin).
 */
import { ConfigError, createLogger, runService } from "@byok/platform";
import { runAdmin } from "./cli/admin.ts";
import { runSetup, type CliIo } from "./cli/setup.ts";
import { loadCommandConfig, loadConfig, type EdgeProxyConfig } from "./config.ts";
import { startEdgeProxy } from "./service.ts";

const io: CliIo = { out: (t) => process.stdout.write(t), err: (t) => process.stderr.write(t) };
const [command, ...args] = process.argv.slice(2);

/** The configuration, or its error on stderr and exit code 2. */
function configOrExit<T extends EdgeProxyConfig>(load: () => T): T {
  try {
    return load();
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    io.err(`${err.message}\n`);
    process.exit(2);
  }
}

switch (command) {
  case undefined:
  case "serve": {
    const config = configOrExit(() => loadConfig(process.env));
    const log = createLogger({ service: "edge-proxy", level: config.logLevel, debugContent: config.logDebugContent });
    await runService("edge-proxy", log, () => startEdgeProxy(config, { log }));
    break;
  }
  case "setup":
    process.exitCode = await runSetup(args, configOrExit(() => loadCommandConfig(process.env)), io);
    break;
  case "admin":
    process.exitCode = await runAdmin(args, configOrExit(() => loadCommandConfig(process.env)), io);
    break;
  default:
    io.err(`unknown command ${command}; use setup, admin or no command to run the proxy\n`);
    process.exitCode = 2;
}
