import { parse as secureJsonParse } from 'secure-json-parse';
import { ApiError } from './api-error.ts';

/**
 * Parsing request bodies: JSON text → value, with the limits that keep a hostile body from
 * costing more than its size. Runs on the event loop for small bodies and in the intake worker
 * (off-thread.ts) for large ones, with the same rules and the same errors either way.
 */

/**
 * Deepest nesting accepted. Real requests nest a handful of levels (a solve problem 4, a chat
 * message's content parts 4); a body of a million `[` parses slowly and overflows the stack of
 * anything recursive that later touches it (JSON.stringify, structured clone).
 */
export const MAX_JSON_DEPTH = 64;

export interface JsonLimits {
  /** Most values (objects, arrays, strings, numbers…) accepted; default unlimited. */
  maxValues?: number;
}

function invalidJson(message: string): ApiError {
  return ApiError.invalidRequest(`Malformed JSON body: ${message}`, null, 'invalid_json');
}

/**
 * Parses `text` as a JSON body: an empty body, invalid JSON and keys that poison prototypes
 * (`__proto__`, `constructor.prototype`) are 400 `invalid_json`; nesting deeper than
 * MAX_JSON_DEPTH and more than `maxValues` values are 400 `json_too_complex`.
 */
export function parseJsonBody(text: string, limits: JsonLimits = {}): unknown {
  if (text.trim() === '') throw invalidJson('the body is empty.');
  let value: unknown;
  try {
    value = secureJsonParse(text, { protoAction: 'error', constructorAction: 'error' });
  } catch (error) {
    throw invalidJson(error instanceof Error ? error.message : 'could not parse');
  }
  checkComplexity(value, limits.maxValues ?? Number.POSITIVE_INFINITY);
  return value;
}

/** Walks the value without recursion (it may be deep), counting values and depth. */
function checkComplexity(root: unknown, maxValues: number): void {
  const stack: { value: unknown; depth: number }[] = [{ value: root, depth: 1 }];
  let values = 0;
  while (stack.length > 0) {
    const { value, depth } = stack.pop()!;
    values++;
    if (values > maxValues) {
      throw ApiError.invalidRequest(`The JSON body holds more than ${maxValues} values, more than this endpoint accepts.`, null, 'json_too_complex');
    }
    if (typeof value !== 'object' || value === null) continue;
    if (depth > MAX_JSON_DEPTH) {
      throw ApiError.invalidRequest(`The JSON body nests deeper than ${MAX_JSON_DEPTH} levels.`, null, 'json_too_complex');
    }
    const children = Array.isArray(value) ? value : Object.values(value);
    for (const child of children) stack.push({ value: child, depth: depth + 1 });
  }
}

/** Body parse for the intake worker: checks a large body there, so the event loop only parses what passed. */
export function checkJsonBody(bytes: Uint8Array, limits: JsonLimits): void {
  parseJsonBody(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8'), limits);
}
