import type { z } from 'zod';
import { parseWithSchema } from '../shared/parse-with-schema.ts';
import { OPENAI_BODY_SCHEMAS } from './openai-schemas.ts';

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

/** The request body checked against `schema`: validated here unless the worker did it with this very schema. */
export function requestBody<S extends z.ZodType>(schema: S, body: unknown): z.output<S> {
  if (body instanceof ValidatedBody && OPENAI_BODY_SCHEMAS.get(body.url) === schema) return body.value as z.output<S>;
  return parseWithSchema(schema, body instanceof ValidatedBody ? body.value : body);
}
