import { createQueryId, type CompiledQuery } from 'kysely';

/**
 * A query Kysely builds and compiles once, then runs with new values. Kysely builds and compiles
 * every query it executes, which was most of a hosted request's key check beyond SQLite's own
 * work (about 100 µs for the key check, of which the indexed read is a fraction); the hot path's
 * queries have a fixed shape, so their SQL is the same every time and only the values change.
 *
 * The query is compiled with placeholder strings in the value positions; each must come out as
 * exactly one parameter of the compiled query (a value Kysely inlines, or a shape that repeats
 * it, is refused at construction, so a mistake shows at start-up, not as a wrong answer).
 * Parameters that are not placeholders (constants of the query) keep their compiled values.
 */
export class PreparedQuery<Row> {
  readonly #compiled: CompiledQuery<Row>;
  readonly #slots: readonly number[];

  constructor(arity: number, build: (placeholders: readonly string[]) => { compile(): CompiledQuery<Row> }) {
    const placeholders = Array.from({ length: arity }, (_, i) => `\u0000svc-prepared-${i}\u0000`);
    this.#compiled = build(placeholders).compile();
    const parameters = this.#compiled.parameters;
    this.#slots = placeholders.map((placeholder) => {
      const slot = parameters.indexOf(placeholder);
      if (slot === -1 || parameters.lastIndexOf(placeholder) !== slot) {
        throw new Error(`prepared query: placeholder ${placeholder.slice(1, -1)} must be exactly one parameter of: ${this.#compiled.sql}`);
      }
      return slot;
    });
  }

  /** The query's SQL text (the same for every run). */
  get sql(): string {
    return this.#compiled.sql;
  }

  /** The compiled query with `values` in the placeholders' positions, in their order. */
  bind(values: readonly unknown[]): CompiledQuery<Row> {
    if (values.length !== this.#slots.length) throw new RangeError(`prepared query takes ${this.#slots.length} values, got ${values.length}`);
    const parameters = [...this.#compiled.parameters];
    this.#slots.forEach((slot, i) => { parameters[slot] = values[i]; });
    // A fresh id per run: plugins (none today) key their per-query state on it.
    return { ...this.#compiled, queryId: createQueryId(), parameters };
  }
}
