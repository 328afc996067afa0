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
  const value = parseJson(text);
  checkComplexity(value, limits.maxValues ?? Number.POSITIVE_INFINITY);
  return value;
}

/** parseJsonBody without the complexity walk, for text that checkJsonBody has already bounded. */
export function parseJson(text: string): unknown {
  if (text.trim() === '') throw invalidJson('the body is empty.');
  try {
    return secureJsonParse(text, { protoAction: 'error', constructorAction: 'error' });
  } catch (error) {
    throw invalidJson(error instanceof Error ? error.message : 'could not parse');
  }
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

const OPEN_BRACKET = 0x5b;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACKET = 0x5d;
const CLOSE_BRACE = 0x7d;
const COMMA = 0x2c;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * The nesting depth of JSON text and an upper bound on its values, read from the bytes without
 * parsing (nothing is allocated, whatever the size): containers opened, and commas outside
 * strings. `[]` counts 2 where it holds 1 value, so the bound is never below the real count.
 * Malformed text is not detected here; JSON.parse refuses it afterwards, and the bounds found
 * here are what keep that parse cheap.
 */
export function scanJson(bytes: Uint8Array): { depth: number; values: number } {
  let depth = 0;
  let deepest = 0;
  let values = 1;
  let inString = false;
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i]!;
    if (inString) {
      if (byte === BACKSLASH) i++;
      else if (byte === QUOTE) inString = false;
      continue;
    }
    switch (byte) {
      case QUOTE:
        inString = true;
        break;
      case OPEN_BRACKET:
      case OPEN_BRACE:
        depth++;
        values++;
        if (depth > deepest) deepest = depth;
        break;
      case CLOSE_BRACKET:
      case CLOSE_BRACE:
        depth--;
        break;
      case COMMA:
        values++;
        break;
    }
  }
  return { depth: deepest, values };
}

/**
 * The intake worker's check of a large body (json-body-parser.ts): depth and values bounded
 * from the bytes alone, so the worker's heap does not grow with what clients send. Returns the
 * bytes, so their memory is handed back to the event loop rather than copied.
 */
export function checkJsonBody(bytes: Uint8Array, limits: JsonLimits): Uint8Array {
  const { depth, values } = scanJson(bytes);
  if (depth > MAX_JSON_DEPTH) throw ApiError.invalidRequest(`The JSON body nests deeper than ${MAX_JSON_DEPTH} levels.`, null, 'json_too_complex');
  const maxValues = limits.maxValues ?? Number.POSITIVE_INFINITY;
  if (values > maxValues) {
    throw ApiError.invalidRequest(`The JSON body holds more than ${maxValues} values, more than this endpoint accepts.`, null, 'json_too_complex');
  }
  return bytes;
}
