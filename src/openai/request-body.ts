import type { z } from 'zod';
import { parseWithSchema } from '../shared/parse-with-schema.ts';
import { OPENAI_BODY_SCHEMAS } from './openai-schemas.ts';
import { ValidatedBody } from '../http/validated-body.ts';

/** The request body checked against `schema`: validated here unless the worker did it with this very schema. */
export function requestBody<S extends z.ZodType>(schema: S, body: unknown): z.output<S> {
  if (body instanceof ValidatedBody && OPENAI_BODY_SCHEMAS.get(body.url) === schema) return body.value as z.output<S>;
  return parseWithSchema(schema, body instanceof ValidatedBody ? body.value : body);
}
