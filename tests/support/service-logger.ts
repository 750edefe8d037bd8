/** Loggers for services started in-process by tests: silent unless HARNESS_LOG_LEVEL (e.g. "debug") is set. */
import { createLogger, silentLogger, type Logger } from "@byok/platform";

export function serviceLogger(service: string): Logger {
  const level = process.env["HARNESS_LOG_LEVEL"];
  return level === undefined || level === "" ? silentLogger() : createLogger({ service, level });
}
