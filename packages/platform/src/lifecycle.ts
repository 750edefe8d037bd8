/** Process lifecycle for service entry points: run, then stop cleanly on SIGINT/SIGTERM. */
import type { Logger } from "pino";

export interface Stoppable {
  stop(): Promise<void>;
}

export async function runService(name: string, log: Logger, start: () => Promise<Stoppable>): Promise<void> {
  let service: Stoppable;
  try {
    service = await start();
  } catch (err) {
    log.fatal({ err }, `${name} failed to start`);
    process.exitCode = 1;
    return;
  }
  log.info(`${name} started`);
  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, `${name} stopping`);
    const force = setTimeout(() => process.exit(1), 10_000);
    force.unref();
    service
      .stop()
      .then(() => process.exit(0))
      .catch((err: unknown) => {
        log.error({ err }, `${name} did not stop cleanly`);
        process.exit(1);
      });
  };
  process.on("SIGINT", () => stop("SIGINT"));
  process.on("SIGTERM", () => stop("SIGTERM"));
}
