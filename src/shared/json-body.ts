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

/** Bodies up to this size are checked and parsed on the event loop (well under a millisecond). */
export const INLINE_JSON_BYTES = 64 * 1024;

export interface JsonLimits {
  /** Most values (objects, arrays, strings, numbers…) accepted; default unlimited. */
  maxValues?: number;
  /** Most objects and arrays accepted (they cost most to parse, clone and validate); default unlimited. */
  maxContainers?: number;
}

function invalidJson(message: string): ApiError {
  return ApiError.invalidRequest(`Malformed JSON body: ${message}`, null, 'invalid_json');
}

/**
 * Parses a JSON body: nesting deeper than MAX_JSON_DEPTH and more than `maxValues` values are
 * 400 `json_too_complex` (read from the bytes before parsing, see scanJson); an empty body,
 * invalid JSON and keys that poison prototypes (`__proto__`, `constructor.prototype`) are 400
 * `invalid_json`.
 */
export function parseJsonBody(bytes: Uint8Array, limits: JsonLimits = {}): unknown {
  return parseJson(checkJsonBody(bytes, limits));
}

/** The parse alone, for bytes that checkJsonBody has already bounded. */
export function parseJson(bytes: Uint8Array): unknown {
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
  if (text.trim() === '') throw invalidJson('the body is empty.');
  try {
    return secureJsonParse(text, { protoAction: 'error', constructorAction: 'error' });
  } catch (error) {
    throw invalidJson(error instanceof Error ? error.message : 'could not parse');
  }
}

const tooComplex = (message: string): ApiError => ApiError.invalidRequest(message, null, 'json_too_complex');

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
export function scanJson(bytes: Uint8Array): { depth: number; values: number; containers: number } {
  let depth = 0;
  let deepest = 0;
  let values = 1;
  let containers = 0;
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
        containers++;
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
  return { depth: deepest, values, containers };
}

/**
 * Depth and values bounded from the bytes alone: on the event loop for a small body, and on the
 * intake worker for a large one (json-body-parser.ts), whose heap then does not grow with what
 * clients send. Returns the bytes, so their memory can be handed back rather than copied.
 */
export function checkJsonBody(bytes: Uint8Array, limits: JsonLimits): Uint8Array {
  const { depth, values, containers } = scanJson(bytes);
  if (depth > MAX_JSON_DEPTH) throw tooComplex(`The JSON body nests deeper than ${MAX_JSON_DEPTH} levels.`);
  const maxValues = limits.maxValues ?? Number.POSITIVE_INFINITY;
  if (values > maxValues) throw tooComplex(`The JSON body holds more than ${maxValues} values, more than this endpoint accepts.`);
  const maxContainers = limits.maxContainers ?? Number.POSITIVE_INFINITY;
  if (containers > maxContainers) throw tooComplex(`The JSON body holds more than ${maxContainers} objects and arrays, more than this endpoint accepts.`);
  return bytes;
}
