/**
 * What the intake worker does with a large body for an OpenAI route (json-body-parser.ts):
 * bound it from its bytes, parse it and validate it with the route's own schema, so the event
 * loop receives a checked request (a structured clone, cheaper than parsing and far cheaper than
 * validating a body of many values) or an error.
 */
import { checkJsonBody, parseJson, type JsonLimits } from '../shared/json-body.ts';
import { parseWithSchema } from '../shared/parse-with-schema.ts';
import { OPENAI_BODY_SCHEMAS } from './openai-schemas.ts';
import type { BodyIntake } from '../http/json-body-parser.ts';

/**
 * `{validated}` for a route with a known schema; otherwise `{parsed}`: the body parsed here too,
 * so the event loop never parses a large body (measured: 50–100 ms on the event loop for a few
 * MB of small objects sent to a route without a schema here, e.g. /api/models/load).
 */
export function intakeOpenAIBody(bytes: Uint8Array, url: string, limits: JsonLimits): { validated: unknown } | { parsed: unknown } {
  checkJsonBody(bytes, limits);
  const value = parseJson(bytes);
  const schema = OPENAI_BODY_SCHEMAS.get(url);
  return schema === undefined ? { parsed: value } : { validated: parseWithSchema(schema, value) };
}

/** This module as the JSON body parser's intake (http/json-body-parser.ts). */
export const OPENAI_BODY_INTAKE: BodyIntake = { module: new URL(import.meta.url), fn: 'intakeOpenAIBody' };
