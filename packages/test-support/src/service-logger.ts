/**
 * Loggers for services started in-process by tests: silent unless
 * HARNESS_LOG_LEVEL (e.g. "debug") is set, or unless the test captures the
 * services' log lines (a `LogCapture`) to check what they contain.
 */
import { createLogger, silentLogger, type Logger } from "@byok/platform";

export interface LogCapture {
  /** Level the services log at while captured (e.g. "debug"). */
  readonly level: string;
  /** Every JSON line the services wrote, in order. */
  readonly lines: string[];
}

export function serviceLogger(service: string, capture?: LogCapture): Logger {
  if (capture !== undefined) return createLogger({ service, level: capture.level, destination: { write: (line) => void capture.lines.push(line) } });
  const level = process.env["HARNESS_LOG_LEVEL"];
  return level === undefined || level === "" ? silentLogger() : createLogger({ service, level });
}
