/**
 * Process lifecycle for service entry points: start, report the outcome to a
 * supervising parent (service-status.ts, when there is an IPC channel), then
 * stop cleanly on SIGINT/SIGTERM, or when the supervising parent is gone.
 */
import type { Logger } from "pino";
import { serviceStatusMessage, startFailureOf, type ServiceEndpoints, type ServiceStatus } from "./service-status.ts";

export interface Stoppable {
  stop(): Promise<void>;
}

export interface RunServiceOptions<S> {
  /** The addresses the started service serves (sent to the supervisor), e.g. (s) => ({ url: s.url }). */
  endpoints?: (service: S) => ServiceEndpoints;
}

/** Sends `status` to the parent process if it listens on an IPC channel; never throws. */
function tellParent(status: ServiceStatus): Promise<void> {
  const send = process.send?.bind(process);
  if (send === undefined || !process.connected) return Promise.resolve();
  return new Promise((resolve) => {
    try {
      send(serviceStatusMessage(status), undefined, {}, () => resolve());
    } catch {
      resolve();
    }
  });
}

export async function runService<S extends Stoppable>(name: string, log: Logger, start: () => Promise<S>, options: RunServiceOptions<S> = {}): Promise<void> {
  let service: S;
  try {
    service = await start();
  } catch (err) {
    log.fatal({ err }, `${name} failed to start`);
    await tellParent({ kind: "failed", service: name, pid: process.pid, ...startFailureOf(err) });
    process.exitCode = 1;
    process.disconnect?.();
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
  if (process.send !== undefined) {
    // Started by a supervisor: a supervisor that is gone (killed) takes its services with it.
    process.on("disconnect", () => stop("supervisor gone"));
    await tellParent({ kind: "started", service: name, pid: process.pid, endpoints: options.endpoints?.(service) ?? {} });
    // The channel must not keep a stopping process alive.
    process.channel?.unref();
  }
}
