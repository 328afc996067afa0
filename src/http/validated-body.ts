/**
 * A body the intake worker has already parsed and validated against the schema of the route at
 * `url` (json-body-parser.ts), so the event loop does not validate a large body again.
 */
export class ValidatedBody {
  readonly value: unknown;
  readonly url: string;
  constructor(value: unknown, url: string) {
    this.value = value;
    this.url = url;
  }
}
