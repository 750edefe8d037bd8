/**
 * The one structured logger. Every service logs JSON lines with `service` set;
 * call sites attach run_id / conversation_id / request_id as child bindings.
 * Prompt text, tool output and keys are never logged unless `debugContent` is on
 * (see `contentForLog`).
 */
import { pino, type Logger } from "pino";

export type { Logger };

export interface LoggerOptions {
  service: string;
  level?: string;
  debugContent?: boolean;
  /** Where JSON lines go (default: stdout). Tests pass a sink to read what services log. */
  destination?: { write(line: string): void };
}

let debugContentEnabled = false;

export function createLogger(options: LoggerOptions): Logger {
  debugContentEnabled = options.debugContent ?? false;
  const settings = {
    level: options.level ?? "info",
    base: { service: options.service },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: {
      paths: ["apiKey", "api_key", "authorization", "*.apiKey", "*.api_key", "*.authorization", "headers.authorization"],
      censor: "[redacted]",
    },
  };
  return options.destination === undefined ? pino(settings) : pino(settings, options.destination);
}

/** A silent logger for tests that do not look at logs. */
export function silentLogger(): Logger {
  return pino({ level: "silent" });
}

/** Prompt text / tool output for a log line: its length unless content debugging is on. */
export function contentForLog(text: string): string | { chars: number } {
  return debugContentEnabled ? text : { chars: text.length };
}
