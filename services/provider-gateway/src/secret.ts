/**
 * A credential that cannot leak by accident: JSON, string conversion and
 * util.inspect all print "[redacted]". Only `reveal()` gives the value, and
 * only SDK client construction and the relay targets of the HTTP front
 * (the openai and anthropic client modules) call it.
 */
const REDACTED = "[redacted]";

export class Secret {
  readonly #value: string;

  constructor(value: string) {
    this.#value = value;
  }

  reveal(): string {
    return this.#value;
  }

  toString(): string {
    return REDACTED;
  }

  toJSON(): string {
    return REDACTED;
  }

  [Symbol.for("nodejs.util.inspect.custom")](): string {
    return REDACTED;
  }
}
