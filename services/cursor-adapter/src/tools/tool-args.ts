/**
 * Model-facing values: tool arguments in (JSON text -> checked fields) and tool
 * results out (anything -> the string the model sees).
 *
 * Argument reading is lenient where models are sloppy in harmless ways (numbers
 * sent as numeric strings, booleans as "true"/"false") and strict otherwise;
 * every problem becomes one message for the model, never an exception.
 */

export type ToolArgs = Record<string, unknown>;

/** Tool results are always strings: strings pass through, everything else is JSON-encoded. */
export function toModelText(value: unknown): string {
  if (typeof value === "string") return value;
  if (value === undefined) return "";
  if (typeof value === "bigint") return value.toString();
  return JSON.stringify(value, (_key, v: unknown) => (typeof v === "bigint" ? v.toString() : v)) ?? "";
}

export type ParsedArgs = { kind: "ok"; args: ToolArgs } | { kind: "invalid"; error: string };

export function parseToolArgs(toolName: string, argumentsJson: string): ParsedArgs {
  const text = argumentsJson.trim() === "" ? "{}" : argumentsJson;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (cause) {
    return { kind: "invalid", error: `Invalid arguments for ${toolName}: not valid JSON (${(cause as Error).message}).` };
  }
  if (!isJsonObject(value)) return { kind: "invalid", error: `Invalid arguments for ${toolName}: expected a JSON object.` };
  return { kind: "ok", args: value };
}

export function isJsonObject(value: unknown): value is ToolArgs {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

interface IntegerRule {
  min?: number;
  max?: number;
}

/** Reads typed fields from tool arguments and collects the problems. */
export class ArgReader {
  readonly #tool: string;
  readonly #args: ToolArgs;
  readonly #problems: string[] = [];

  constructor(tool: string, args: ToolArgs) {
    this.#tool = tool;
    this.#args = args;
  }

  /** undefined when there is no problem; otherwise the message the model sees. */
  error(): string | undefined {
    if (this.#problems.length === 0) return undefined;
    return `Invalid arguments for ${this.#tool}: ${this.#problems.join("; ")}.`;
  }

  problem(message: string): void {
    this.#problems.push(message);
  }

  /** A non-empty string (after trimming) that must be present. */
  requiredString(key: string): string {
    const value = this.#args[key];
    if (value === undefined || value === null) {
      this.problem(`"${key}" is required`);
      return "";
    }
    if (typeof value !== "string") {
      this.problem(`"${key}" must be a string`);
      return "";
    }
    if (value.trim() === "") {
      this.problem(`"${key}" must not be empty`);
      return "";
    }
    return value;
  }

  /** A string that must be present but may be empty (e.g. old_string, contents). */
  requiredText(key: string): string {
    const value = this.#args[key];
    if (typeof value === "string") return value;
    this.problem(value === undefined || value === null ? `"${key}" is required` : `"${key}" must be a string`);
    return "";
  }

  /** Optional string; empty strings count as absent. */
  optionalString(key: string): string | undefined {
    const value = this.#args[key];
    if (value === undefined || value === null) return undefined;
    if (typeof value === "number" && Number.isFinite(value)) return String(value);
    if (typeof value !== "string") {
      this.problem(`"${key}" must be a string`);
      return undefined;
    }
    return value === "" ? undefined : value;
  }

  optionalInteger(key: string, rule: IntegerRule = {}): number | undefined {
    const raw = this.#args[key];
    if (raw === undefined || raw === null) return undefined;
    const value = typeof raw === "string" && /^\s*-?\d+\s*$/.test(raw) ? Number(raw) : raw;
    if (typeof value !== "number" || !Number.isInteger(value)) {
      this.problem(`"${key}" must be an integer`);
      return undefined;
    }
    if (rule.min !== undefined && value < rule.min) {
      this.problem(`"${key}" must be at least ${rule.min}`);
      return undefined;
    }
    if (rule.max !== undefined && value > rule.max) {
      this.problem(`"${key}" must be at most ${rule.max}`);
      return undefined;
    }
    return value;
  }

  optionalBoolean(key: string): boolean | undefined {
    const value = this.#args[key];
    if (value === undefined || value === null) return undefined;
    if (typeof value === "boolean") return value;
    if (value === "true" || value === "false") return value === "true";
    this.problem(`"${key}" must be a boolean`);
    return undefined;
  }

  optionalStringArray(key: string): string[] | undefined {
    const value = this.#args[key];
    if (value === undefined || value === null) return undefined;
    if (!Array.isArray(value) || !value.every((v) => typeof v === "string")) {
      this.problem(`"${key}" must be an array of strings`);
      return undefined;
    }
    return value;
  }

  /** Optional JSON object; a string holding a JSON object is accepted too. */
  optionalObject(key: string): ToolArgs | undefined {
    const value = this.#args[key];
    if (value === undefined || value === null) return undefined;
    if (isJsonObject(value)) return value;
    if (typeof value === "string") {
      try {
        const parsed: unknown = JSON.parse(value);
        if (isJsonObject(parsed)) return parsed;
      } catch {
        // reported below
      }
    }
    this.problem(`"${key}" must be a JSON object`);
    return undefined;
  }

  /** Optional array of objects (each element checked by the caller). */
  optionalArray(key: string): unknown[] | undefined {
    const value = this.#args[key];
    if (value === undefined || value === null) return undefined;
    if (!Array.isArray(value)) {
      this.problem(`"${key}" must be an array`);
      return undefined;
    }
    return value;
  }

  /** Optional regular expression (JS syntax, multiline). */
  optionalRegex(key: string): { source: string; regex: RegExp } | undefined {
    const source = this.optionalString(key);
    if (source === undefined) return undefined;
    try {
      return { source, regex: new RegExp(source, "m") };
    } catch (cause) {
      this.problem(`"${key}" is not a valid regular expression (${(cause as Error).message})`);
      return undefined;
    }
  }
}

/** Keeps the head and the tail of a long text, with a marker saying how much was left out. */
export function clipMiddle(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  const half = Math.floor(maxChars / 2);
  const omitted = text.length - 2 * half;
  return `${text.slice(0, half)}\n[... ${omitted} characters omitted ...]\n${text.slice(text.length - half)}`;
}
