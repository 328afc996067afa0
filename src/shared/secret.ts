import { inspect } from 'node:util';

/**
 * A secret (an API key) that does not leak by accident: JSON, string conversion and
 * `util.inspect` (what loggers and `console.log` use) all show `[redacted]`; only `reveal()`
 * gives the value, at the one place that must send it.
 */
export class Secret {
  readonly #value: string;

  constructor(value: string) {
    this.#value = value;
  }

  reveal(): string {
    return this.#value;
  }

  toJSON(): string {
    return '[redacted]';
  }

  toString(): string {
    return '[redacted]';
  }

  [inspect.custom](): string {
    return '[redacted]';
  }
}
