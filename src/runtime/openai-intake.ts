/**
 * What the intake worker does with a large body for an OpenAI route (json-body-parser.ts):
 * bound it from its bytes, parse it and validate it with the route's own schema, so the event
 * loop receives a checked request (a structured clone, cheaper than parsing and far cheaper than
 * validating a body of many values) or an error.
 */
import { checkJsonBody, parseJson, type JsonLimits } from '../shared/json-body.ts';
import { parseWithSchema } from '../shared/parse-with-schema.ts';
import { OPENAI_BODY_SCHEMAS } from './openai-schemas.ts';

/** `{validated}` for a route with a known schema; otherwise the bytes, checked, for the event loop to parse. */
export function intakeOpenAIBody(bytes: Uint8Array, url: string, limits: JsonLimits): { validated: unknown } | Uint8Array {
  checkJsonBody(bytes, limits);
  const schema = OPENAI_BODY_SCHEMAS.get(url);
  if (schema === undefined) return bytes;
  return { validated: parseWithSchema(schema, parseJson(bytes)) };
}
