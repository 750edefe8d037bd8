/**
 * The SDKs' own log lines, into our JSON logger (child `sdk`) instead of the
 * console. Only the message is kept: the extra arguments can hold request
 * details. Debug lines are dropped.
 */
import type { Logger } from "@byok/platform";

type LogFn = (message: string, ...rest: unknown[]) => void;

export interface SdkLogger {
  error: LogFn;
  warn: LogFn;
  info: LogFn;
  debug: LogFn;
}

export function sdkLogger(log: Logger, sdk: string): SdkLogger {
  const child = log.child({ sdk });
  return {
    error: (message) => child.error(message),
    warn: (message) => child.warn(message),
    info: (message) => child.info(message),
    debug: () => undefined,
  };
}
