/**
 * fast-check generators of hostile HTTP requests for every daemon route, derived from the route
 * schemas (zod → JSON Schema → field paths) and applied as mutations to known-valid seed bodies;
 * plus malformed HTTP/1.1 framing written byte by byte. Shared by test/fuzz/daemon-fuzz.test.ts
 * (a few hundred requests) and bench/reliability.ts (tens of thousands).
 */
import fc from 'fast-check';
import { z } from 'zod';
import { PROBLEM_SCHEMAS, SOLVER_NAMES, batchRequestSchema, solveRequestSchema } from '../../src/quantum/solve-schemas.ts';
import { chatCompletionRequestSchema, completionRequestSchema, embeddingRequestSchema, responseRequestSchema } from '../../src/openai/openai-schemas.ts';
import { modelResidencyBodySchema } from '../../src/runtime/model-residency-routes.ts';

// ---------------------------------------------------------------------------------------------
// JSON values JSON.stringify cannot write
// ---------------------------------------------------------------------------------------------

/** JSON text written as is: `-0`, `1e999`, 30-digit integers, 10 000 nested brackets. */
export class RawJson {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
}

/** A string whose UTF-8 bytes are invalid (a CESU-8 lone surrogate, an overlong form, 0xFF). */
export class InvalidUtf8 {
  static readonly BYTES = Buffer.from([0xed, 0xa0, 0x80, 0xc0, 0xaf, 0xff, 0xc3, 0x28]);
}

/** Placeholder written into the JSON text where InvalidUtf8 goes; swapped for its bytes after encoding. */
const INVALID_UTF8_MARK = '\u0001\u0002INVALID_UTF8\u0002\u0001';

/** True when JSON.stringify can write `value` (no RawJson/InvalidUtf8 inside): the fast path for huge values. */
function isPlainJson(value: unknown, depth = 0): boolean {
  if (typeof value !== 'object' || value === null) return true;
  if (value instanceof RawJson || value instanceof InvalidUtf8 || depth > 4) return false;
  return Object.values(value).every((v) => typeof v !== 'object' || v === null || isPlainJson(v, depth + 1));
}

/** JSON text of a value made of plain data, RawJson and InvalidUtf8 (own `__proto__` keys are written like any other). */
export function encodeJson(value: unknown): string {
  if (isPlainJson(value)) return JSON.stringify(value) ?? 'null';
  if (value instanceof RawJson) return value.text;
  if (value instanceof InvalidUtf8) return `"${INVALID_UTF8_MARK}"`;
  if (Array.isArray(value)) return `[${value.map((v) => encodeJson(v)).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    return `{${Object.keys(value).map((k) => `${JSON.stringify(k)}:${encodeJson((value as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** UTF-8 bytes of JSON text, with each InvalidUtf8 placeholder replaced by invalid bytes. */
export function jsonBytes(text: string): Buffer {
  if (!text.includes(INVALID_UTF8_MARK)) return Buffer.from(text, 'utf8');
  return Buffer.concat(text.split(INVALID_UTF8_MARK).flatMap((part, i) => (i === 0 ? [Buffer.from(part)] : [InvalidUtf8.BYTES, Buffer.from(part)])));
}

/** An object with `key` as an own enumerable property even when it is `__proto__`. */
function withOwn(target: Record<string, unknown>, key: string, value: unknown): Record<string, unknown> {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  return target;
}

// ---------------------------------------------------------------------------------------------
// Field paths from the schemas
// ---------------------------------------------------------------------------------------------

type JsonType = 'string' | 'number' | 'integer' | 'boolean' | 'null' | 'array' | 'object';
type Segment = string | number;

interface JsonSchemaNode {
  type?: JsonType | JsonType[];
  properties?: Record<string, JsonSchemaNode>;
  additionalProperties?: unknown;
  required?: string[];
  items?: JsonSchemaNode;
  anyOf?: JsonSchemaNode[];
  oneOf?: JsonSchemaNode[];
  allOf?: JsonSchemaNode[];
  const?: unknown;
  enum?: unknown[];
}

/** One field a schema defines: where it is, which JSON types it accepts, whether it must be there. */
export interface FieldPath {
  path: Segment[];
  /** Accepted JSON types; empty = anything (z.unknown()). */
  types: Set<JsonType>;
  required: boolean;
  /** The field is (or may be) an object, so unknown keys can be added to it. */
  object: boolean;
  /** Values an enum or literal allows. */
  choices: unknown[];
}

function jsonTypeOf(value: unknown): JsonType {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  if (typeof value === 'string') return 'string';
  if (typeof value === 'boolean') return 'boolean';
  return 'object';
}

/** The branches of a node: itself and its anyOf/oneOf/allOf alternatives, flattened. */
function branches(node: JsonSchemaNode): JsonSchemaNode[] {
  const alternatives = [...(node.anyOf ?? []), ...(node.oneOf ?? []), ...(node.allOf ?? [])];
  return [node, ...alternatives.flatMap(branches)];
}

/**
 * Walks a zod schema's JSON Schema (zod's own `z.toJSONSchema`, input side) and lists every
 * field path: object properties by name, array items at index 0, union branches merged.
 */
export function fieldPaths(schema: z.ZodType, prefix: Segment[] = []): FieldPath[] {
  const root = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as JsonSchemaNode;
  const found = new Map<string, FieldPath>();
  const walk = (node: JsonSchemaNode, path: Segment[], required: boolean, depth: number): void => {
    const key = JSON.stringify(path);
    const entry = found.get(key) ?? { path, types: new Set<JsonType>(), required, object: false, choices: [] };
    found.set(key, entry);
    entry.required &&= required;
    let typed = false;
    for (const b of branches(node)) {
      for (const t of b.type === undefined ? [] : Array.isArray(b.type) ? b.type : [b.type]) {
        entry.types.add(t);
        typed = true;
      }
      if (b.const !== undefined) {
        entry.types.add(jsonTypeOf(b.const));
        entry.choices.push(b.const);
        typed = true;
      }
      for (const v of b.enum ?? []) {
        entry.types.add(jsonTypeOf(v));
        entry.choices.push(v);
        typed = true;
      }
      if (b.properties !== undefined || b.additionalProperties !== undefined) entry.object = true;
      if (depth >= 6) continue;
      for (const [name, sub] of Object.entries(b.properties ?? {})) walk(sub, [...path, name], (b.required ?? []).includes(name), depth + 1);
      if (b.items !== undefined) walk(b.items, [...path, 0], false, depth + 1);
    }
    // `{}` (z.unknown()) accepts anything: no type is "wrong" for it.
    if (!typed && branches(node).every((b) => b.properties === undefined && b.items === undefined)) entry.types.clear();
  };
  walk(root, prefix, true, 0);
  return [...found.values()];
}

// ---------------------------------------------------------------------------------------------
// Hostile values
// ---------------------------------------------------------------------------------------------

/** Keys that live on Object.prototype (or are special to it): as keys and as values. */
export const PROTO_KEYS = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'prototype', 'valueOf', 'isPrototypeOf', '__defineGetter__'] as const;

/** Sizes of "huge" values, bytes of JSON roughly; the body limit (16 MB) is tested separately. */
const HUGE_SIZES = [10_000, 200_000, 1_000_000] as const;
/** Nesting depths; V8's JSON.parse takes 100 000, its JSON.stringify overflows the stack at 10 000 (Node 24). */
const DEPTHS = [100, 10_000, 100_000] as const;

const rawNumber = fc
  .constantFrom('-0', '1e308', '-1e308', '1e309', '-1e999', '5e-324', '1e-400', '123456789012345678901234567890', '9007199254740993', '-9007199254740993', '1.0', '0e0', '-0.0', '1E+2', '4.0000000000000001')
  .map((t) => new RawJson(t));

const weirdString = fc.oneof(
  fc.constantFrom(
    '', ' ', 'NaN', 'Infinity', '-Infinity', '-0', '1e308', '0x10', '１２', ' 42 ', 'null', 'undefined', 'true', '[]', '{}',
    '\ud800', '\udfff', '\udc00\ud800', 'a\u0000b', '\u202eevil', '\ufeff', '😀', 'e\u0301', '\u2028\u2029', '%00', '../../etc/passwd', '${7*7}', '<script>',
    'tiny', 'TINY', 'tiny ', 'local', 'vendor-eagle', ...SOLVER_NAMES,
  ),
  fc.string({ unit: 'binary', maxLength: 24 }),
  fc.string({ unit: 'grapheme', maxLength: 24 }),
);

const protoString = fc.constantFrom(...PROTO_KEYS);

const number = fc.oneof(
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(0, -1, 1, 2 ** 31, 2 ** 32, 2 ** 53, -(2 ** 53), Number.MAX_SAFE_INTEGER + 2, 1e21, Number.MAX_VALUE, Number.MIN_VALUE, 0.1, -0.5),
);

const deep = fc.tuple(fc.constantFrom(...DEPTHS), fc.constantFrom('array', 'object', 'mixed')).map(([n, kind]) => {
  if (kind === 'array') return new RawJson('['.repeat(n) + ']'.repeat(n));
  if (kind === 'object') return new RawJson('{"a":'.repeat(n) + '1' + '}'.repeat(n));
  return new RawJson('[{"a":'.repeat(n) + 'null' + '}]'.repeat(n));
});

const huge = fc.tuple(fc.constantFrom(...HUGE_SIZES), fc.constantFrom('string', 'unicode', 'numbers', 'strings', 'keys', 'objects')).map(([size, kind]): unknown => {
  switch (kind) {
    case 'string':
      return 'x'.repeat(size);
    case 'unicode':
      return '😀é\u0000'.repeat(Math.ceil(size / 12));
    case 'numbers':
      return new Array<number>(Math.ceil(size / 2)).fill(7);
    case 'strings':
      return new Array<string>(Math.ceil(size / 4)).fill('a');
    case 'keys':
      return Object.fromEntries(Array.from({ length: Math.ceil(size / 12) }, (_, i) => [`k${i}`, i]));
    default:
      return Array.from({ length: Math.ceil(size / 20) }, (_, i) => ({ id: `p${i}`, features: [i] }));
  }
});

const container = fc.oneof(
  fc.constantFrom('[]', '{}', '[null]', '[[]]', '{"":null}', '[1,"a",true]').map((t) => new RawJson(t)),
  protoString.map((k) => withOwn({}, k, { polluted: true })),
  fc.constant(null).map(() => ({ constructor: { prototype: { polluted: true } } })),
  fc.constant(null).map(() => withOwn({}, '__proto__', { toString: 'x', valueOf: 1 })),
);

/** Any hostile JSON value (weighted toward cheap ones; huge and deep ones are rarer). */
export const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  { arbitrary: fc.constantFrom<unknown>(null, true, false, 0, 1, -1, 0.5), weight: 3 },
  { arbitrary: protoString, weight: 3 },
  { arbitrary: weirdString, weight: 4 },
  { arbitrary: number, weight: 3 },
  { arbitrary: rawNumber, weight: 3 },
  { arbitrary: container, weight: 3 },
  { arbitrary: fc.constant(null).map(() => new InvalidUtf8()), weight: 1 },
  { arbitrary: deep, weight: 1 },
  { arbitrary: huge, weight: 1 },
);

/** Hostile values of each JSON type, for "wrong type" mutations. */
const OF_TYPE = new Map<JsonType, fc.Arbitrary<unknown>>([
  ['string', fc.oneof(weirdString, protoString, fc.constant(null).map(() => new InvalidUtf8()), huge.filter((v) => typeof v === 'string'))],
  ['integer', fc.oneof(fc.integer(), rawNumber.filter((r) => Number.isInteger(Number(r.text))), fc.constantFrom(2 ** 53, -(2 ** 53), 1e21, Number.MAX_VALUE))],
  ['number', fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }).filter((n) => !Number.isInteger(n)), fc.constantFrom('1e309', '-1e999', '0.5', '1e-400', '4.0000000000000001').map((t) => new RawJson(t)))],
  ['boolean', fc.boolean()],
  ['null', fc.constant(null)],
  ['array', fc.oneof(fc.constantFrom('[]', '[null]', '[[]]', '[1,"a",true]').map((t) => new RawJson(t)), deep.filter((d) => d.text.startsWith('[')), huge.filter(Array.isArray))],
  ['object', fc.oneof(container.filter((c) => !(c instanceof RawJson) || c.text.startsWith('{')), deep.filter((d) => d.text.startsWith('{')), huge.filter((v) => typeof v === 'object' && v !== null && !Array.isArray(v)))],
]);

/** The JSON types a field refuses (an integer is a number too; z.unknown() refuses none). */
function wrongTypes(field: FieldPath): JsonType[] {
  if (field.types.size === 0) return [];
  return [...OF_TYPE.keys()].filter((t) => !field.types.has(t) && !(t === 'integer' && field.types.has('number')));
}

// ---------------------------------------------------------------------------------------------
// Mutations of seed bodies
// ---------------------------------------------------------------------------------------------

/** A change to a seed body (`describeMutation` words it for failure reports). */
export type Mutation =
  | { kind: 'set'; why: string; path: Segment[]; value: unknown }
  | { kind: 'delete'; path: Segment[] }
  | { kind: 'add-key'; path: Segment[]; key: string; value: unknown }
  | { kind: 'replace-body'; value: unknown };

function isPlainContainer(v: unknown): v is Record<string, unknown> | unknown[] {
  return typeof v === 'object' && v !== null && !(v instanceof RawJson) && !(v instanceof InvalidUtf8);
}

/** A shallow copy that keeps own `__proto__` keys as own keys. */
function copyContainer(v: Record<string, unknown> | unknown[]): Record<string, unknown> | unknown[] {
  if (Array.isArray(v)) return v.slice();
  return Object.defineProperties({}, Object.getOwnPropertyDescriptors(v)) as Record<string, unknown>;
}

function getOwn(container: Record<string, unknown> | unknown[], key: Segment): unknown {
  return Object.prototype.hasOwnProperty.call(container, key) ? (container as Record<string, unknown>)[key as string] : undefined;
}

function setOwn(container: Record<string, unknown> | unknown[], key: Segment, value: unknown): void {
  if (Array.isArray(container) && typeof key === 'number') container[key] = value;
  else withOwn(container as Record<string, unknown>, String(key), value);
}

/** Applies a mutation copy-on-write along its path (seeds and shared values stay untouched). */
export function applyMutation(body: unknown, m: Mutation): unknown {
  if (m.kind === 'replace-body') return m.value;
  const path = m.kind === 'add-key' ? [...m.path, m.key] : m.path;
  if (path.length === 0) return body;
  const root = isPlainContainer(body) ? copyContainer(body) : {};
  let node = root;
  for (let i = 0; i < path.length - 1; i++) {
    const key = path[i]!;
    const existing = getOwn(node, key);
    const child = isPlainContainer(existing) ? copyContainer(existing) : typeof path[i + 1] === 'number' ? [] : {};
    setOwn(node, key, child);
    node = child;
  }
  const last = path[path.length - 1]!;
  if (m.kind === 'delete') {
    if (Array.isArray(node) && typeof last === 'number') node.splice(last, 1);
    else delete (node as Record<string, unknown>)[String(last)];
  } else {
    setOwn(node, last, m.value);
  }
  return root;
}

export function describeMutation(m: Mutation): string {
  const where = (p: Segment[]) => (p.length === 0 ? '(body)' : p.join('.'));
  const what = (v: unknown) => preview(encodeJson(v), 80);
  switch (m.kind) {
    case 'set':
      return `${m.why} ${where(m.path)} = ${what(m.value)}`;
    case 'delete':
      return `delete ${where(m.path)}`;
    case 'add-key':
      return `add key ${where(m.path)}[${preview(JSON.stringify(m.key), 60)}] = ${what(m.value)}`;
    default:
      return `body = ${what(m.value)}`;
  }
}

/** A known-valid body and the fields its schema defines. */
export interface BodyTarget {
  name: string;
  seed: Record<string, unknown>;
  fields: FieldPath[];
}

/** Field names where prototype keys are most likely to be looked up (model, solver, problem type). */
const LOOKUP_FIELDS = new Set(['model', 'solver', 'type', 'role', 'substrate', 'format', 'encoding_format']);

export function mutationOf(target: BodyTarget): fc.Arbitrary<Mutation> {
  const fields = target.fields.filter((f) => f.path.length > 0);
  const required = fields.filter((f) => f.required);
  const objects = target.fields.filter((f) => f.object);
  const withChoices = fields.filter((f) => f.choices.length > 0);
  const lookups = fields.filter((f) => LOOKUP_FIELDS.has(String(f.path[f.path.length - 1])));
  const field = fc.constantFrom(...fields);
  const typed = fields.flatMap((f) => wrongTypes(f).map((t) => ({ f, t })));
  const options: fc.WeightedArbitrary<Mutation>[] = [
    {
      weight: 5,
      arbitrary: fc.constantFrom(...typed).chain(({ f, t }) => OF_TYPE.get(t)!.map((value): Mutation => ({ kind: 'set', why: `wrong type (${t}) at`, path: f.path, value }))),
    },
    { weight: 3, arbitrary: field.chain((f) => hostileValue.map((value): Mutation => ({ kind: 'set', why: 'hostile value at', path: f.path, value }))) },
    { weight: 2, arbitrary: field.chain((f) => protoString.map((value): Mutation => ({ kind: 'set', why: 'prototype key at', path: f.path, value }))) },
    {
      weight: 2,
      arbitrary: fc.constantFrom(...objects).chain((f) =>
        fc.tuple(fc.oneof(protoString, weirdString, fc.constantFrom('x'.repeat(5_000), 'unknown_field')), hostileValue).map(([key, value]): Mutation => ({ kind: 'add-key', path: f.path, key, value })),
      ),
    },
    { weight: 1, arbitrary: hostileValue.map((value): Mutation => ({ kind: 'replace-body', value })) },
  ];
  if (required.length > 0) options.push({ weight: 2, arbitrary: fc.constantFrom(...required).map((f): Mutation => ({ kind: 'delete', path: f.path })) });
  if (withChoices.length > 0) {
    options.push({ weight: 2, arbitrary: fc.constantFrom(...withChoices).chain((f) => fc.constantFrom(...f.choices).map((value): Mutation => ({ kind: 'set', why: 'other allowed value at', path: f.path, value }))) });
  }
  if (lookups.length > 0) {
    options.push({ weight: 3, arbitrary: fc.tuple(fc.constantFrom(...lookups), fc.oneof(protoString, weirdString)).map(([f, value]): Mutation => ({ kind: 'set', why: 'lookup key at', path: f.path, value })) });
  }
  return fc.oneof(...options);
}

// ---------------------------------------------------------------------------------------------
// Body text and framing-level damage
// ---------------------------------------------------------------------------------------------

/** What is done to the encoded JSON text (most bodies are left intact). */
type TextDamage =
  | { kind: 'none' }
  | { kind: 'literal'; text: string }
  | { kind: 'truncate'; at: number }
  | { kind: 'append'; text: string }
  | { kind: 'prepend'; text: string }
  | { kind: 'single-quotes' }
  | { kind: 'duplicate-key'; key: string; value: unknown }
  | { kind: 'utf16' };

const textDamage: fc.Arbitrary<TextDamage> = fc.oneof(
  { weight: 14, arbitrary: fc.constant<TextDamage>({ kind: 'none' }) },
  { weight: 1, arbitrary: fc.constantFrom('', ' ', '\r\n', 'null', '[]', '"x"', '0', 'true', '{', '}', 'NaN', '{"a":NaN}', "{'a':1}", '{"a":1,}', '/* */{}', '\u0000', 'undefined').map((text): TextDamage => ({ kind: 'literal', text })) },
  { weight: 2, arbitrary: fc.nat({ max: 10_000 }).map((at): TextDamage => ({ kind: 'truncate', at })) },
  { weight: 1, arbitrary: fc.constantFrom('x', '}', ',', ']', '\u0000', ' // c', '{"a":1}', '\n\n').map((text): TextDamage => ({ kind: 'append', text })) },
  { weight: 1, arbitrary: fc.constantFrom('\ufeff', ' \t\n', ')]}\',\n', 'x').map((text): TextDamage => ({ kind: 'prepend', text })) },
  { weight: 1, arbitrary: fc.constant<TextDamage>({ kind: 'single-quotes' }) },
  { weight: 1, arbitrary: fc.tuple(fc.oneof(protoString, fc.constantFrom('model', 'solver', 'problem', 'messages', 'stream')), hostileValue).map(([key, value]): TextDamage => ({ kind: 'duplicate-key', key, value })) },
  { weight: 1, arbitrary: fc.constant<TextDamage>({ kind: 'utf16' }) },
);

function damage(text: string, d: TextDamage): { bytes: Buffer; note: string | null } {
  switch (d.kind) {
    case 'none':
      return { bytes: jsonBytes(text), note: null };
    case 'literal':
      return { bytes: Buffer.from(d.text), note: `body text ${JSON.stringify(d.text)}` };
    case 'truncate': {
      const at = text.length === 0 ? 0 : d.at % text.length;
      return { bytes: jsonBytes(text.slice(0, at)), note: `body truncated at ${at} of ${text.length} chars` };
    }
    case 'append':
      return { bytes: jsonBytes(text + d.text), note: `appended ${JSON.stringify(d.text)}` };
    case 'prepend':
      return { bytes: jsonBytes(d.text + text), note: `prepended ${JSON.stringify(d.text)}` };
    case 'single-quotes':
      return { bytes: jsonBytes(text.replaceAll('"', "'")), note: 'single quotes' };
    case 'duplicate-key':
      return {
        bytes: jsonBytes(text.startsWith('{') && text !== '{}' ? `{${JSON.stringify(d.key)}:${encodeJson(d.value)},${text.slice(1)}` : text),
        note: `duplicate key ${JSON.stringify(d.key)} = ${preview(encodeJson(d.value), 60)} first`,
      };
    default:
      return { bytes: Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]), note: 'body encoded as UTF-16LE with BOM' };
  }
}

/** Content-Type values: mostly right, sometimes wrong media types, parameters or charsets. */
const contentType = fc.oneof(
  { weight: 12, arbitrary: fc.constant<string | null>('application/json') },
  {
    weight: 5,
    arbitrary: fc.constantFrom<string | null>(
      null, '', 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/xml', '*/*', 'application',
      'application/JSON', 'APPLICATION/JSON; CHARSET=UTF-8', 'application/json; charset=utf-8', 'application/json;charset="utf-8"', 'application/json; charset=utf8',
      'application/json; charset=utf-16', 'application/json; charset=UTF-16LE', 'application/json; charset=latin1', 'application/json; charset=iso-8859-1',
      'application/json; charset=us-ascii', 'application/json; charset=', 'application/json; charset', 'application/json;;', 'application/json; boundary=x',
      'application/jsonx', 'application/problem+json', 'application/json-seq', ' application/json', 'application/json\t', 'application/json, text/plain',
      'application/json; charset=utf-8; charset=utf-16', `application/json; x=${'y'.repeat(4000)}`,
    ),
  },
);

/** Charsets a client may legitimately call UTF-8; anything else named is refused (issue 7, item 8). */
const UTF8_NAMES = new Set(['utf-8', 'utf8']);

/**
 * Whether a Content-Type names a charset other than UTF-8 on a JSON media type (such a body must
 * not be accepted as if it were UTF-8). Parameters without a value are not counted: they name none.
 */
export function namesForeignCharset(type: string | null): boolean {
  if (type === null) return false;
  const [media, ...params] = type.split(';');
  if (media?.trim().toLowerCase() !== 'application/json') return false;
  const charsets = params.map((p) => p.trim().split('=')).filter(([k, v]) => k?.trim().toLowerCase() === 'charset' && v !== undefined && v.trim() !== '');
  return charsets.some(([, v]) => !UTF8_NAMES.has(v!.trim().replace(/^"(.*)"$/, '$1').toLowerCase()));
}

// ---------------------------------------------------------------------------------------------
// Requests
// ---------------------------------------------------------------------------------------------

/** One generated request; written onto a socket by `requestBytes`. */
export interface HostileRequest {
  /** Which generator and which changes, for failure reports. */
  label: string;
  method: string;
  target: string;
  headers: [string, string][];
  body: Buffer | null;
  /** Send the body with `Transfer-Encoding: chunked` instead of Content-Length. */
  chunked: boolean;
  /** The Content-Type names a non-UTF-8 charset: a 2xx would mean it was read as UTF-8. */
  foreignCharset: boolean;
}

/** The request as bytes for a socket; `Connection: close` so the reply ends with the socket. */
export function requestBytes(req: HostileRequest, host: string): Buffer {
  const head = [`${req.method} ${req.target} HTTP/1.1`, `Host: ${host}`, 'Connection: close', ...req.headers.map(([k, v]) => `${k}: ${v}`)];
  if (req.body === null) return Buffer.from(`${head.join('\r\n')}\r\n\r\n`, 'latin1');
  if (!req.chunked) return Buffer.concat([Buffer.from(`${head.join('\r\n')}\r\nContent-Length: ${req.body.length}\r\n\r\n`, 'latin1'), req.body]);
  const chunks: Buffer[] = [Buffer.from(`${head.join('\r\n')}\r\nTransfer-Encoding: chunked\r\n\r\n`, 'latin1')];
  const size = Math.max(1, Math.ceil(req.body.length / 3));
  for (let i = 0; i < req.body.length; i += size) {
    const part = req.body.subarray(i, i + size);
    chunks.push(Buffer.from(`${part.length.toString(16)}\r\n`), part, Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from('0\r\n\r\n'));
  return Buffer.concat(chunks);
}

/** At most `max` characters, marking what was cut. */
export function preview(text: string, max = 300): string {
  return text.length <= max ? text : `${text.slice(0, max)}… (${text.length} chars)`;
}

/** A short, printable account of a request (bodies can be megabytes). */
export function describeRequest(req: HostileRequest): string {
  const body = req.body === null ? '(no body)' : `${req.body.length} bytes: ${preview(req.body.toString('utf8'), 200)}`;
  return `${req.label}\n    ${req.method} ${preview(req.target, 200)}${req.chunked ? ' (chunked)' : ''}\n    headers ${preview(JSON.stringify(req.headers), 200)}\n    body ${body}`;
}

/** A route that takes a JSON body, with the schemas its seeds are derived from. */
export interface BodyRoute {
  name: string;
  method: 'POST';
  path: string;
  targets: BodyTarget[];
  /** Chat and legacy completions generate text: keep any body that would validate to ≤ 4 tokens. */
  generates: boolean;
}

function target(name: string, seed: Record<string, unknown>, schema: z.ZodType | null, nested: { at: Segment[]; schema: z.ZodType }[] = []): BodyTarget {
  const fields = schema === null ? seedPaths(seed) : fieldPaths(schema);
  for (const n of nested) fields.push(...fieldPaths(n.schema, n.at).filter((f) => f.path.length > n.at.length));
  return { name, seed, fields };
}

/** Paths of a body no schema describes (the 501 routes): taken from the seed itself. */
function seedPaths(seed: unknown, path: Segment[] = []): FieldPath[] {
  const here: FieldPath = { path, types: new Set([jsonTypeOf(seed)]), required: true, object: isPlainContainer(seed) && !Array.isArray(seed), choices: [] };
  if (!isPlainContainer(seed)) return [here];
  const entries: [Segment, unknown][] = Array.isArray(seed) ? seed.map((v, i) => [i, v]) : Object.entries(seed);
  return [here, ...entries.flatMap(([k, v]) => seedPaths(v, [...path, k]))];
}

export const TINY_MODEL = 'tiny';
/** Generation is bounded by this many tokens in every body that can validate. */
export const MAX_GENERATED_TOKENS = 4;

const chatSeed = { model: TINY_MODEL, messages: [{ role: 'user', content: 'hello' }], max_tokens: 2 };
const streamingChatSeed = {
  model: TINY_MODEL,
  messages: [{ role: 'system', content: 'be brief' }, { role: 'user', content: [{ type: 'text', text: 'hi' }] }],
  max_tokens: 3, stream: true, stream_options: { include_usage: true }, stop: ['\n'], temperature: 0, seed: 3,
};

/** Tools and structured output: schemas reach the grammar checker, calls the function-name grammar. */
const toolParameters = { type: 'object', properties: { on: { type: 'boolean' }, n: { enum: [1, 2] } }, required: ['on'], additionalProperties: false };
const toolsChatSeed = {
  model: TINY_MODEL, messages: [{ role: 'user', content: 'hi' }], max_tokens: 4, temperature: 1, seed: 1,
  tools: [{ type: 'function', function: { name: 'f', description: 'd', parameters: toolParameters, strict: true } }], tool_choice: 'required', parallel_tool_calls: false,
};
const structuredChatSeed = {
  model: TINY_MODEL, messages: [{ role: 'user', content: 'hi' }], max_tokens: 4,
  response_format: { type: 'json_schema', json_schema: { name: 'x', strict: true, schema: { type: 'object', properties: { a: { anyOf: [{ type: 'string', maxLength: 2 }, { $ref: '#/$defs/b' }] } }, $defs: { b: { type: 'array', items: { type: 'integer' } } } } } },
};
const responsesSeed = { model: TINY_MODEL, input: 'hello', instructions: 'be brief', max_output_tokens: 2 };
const responsesToolsSeed = {
  model: TINY_MODEL, max_output_tokens: 4, stream: true, tools: [{ type: 'function', name: 'f', parameters: toolParameters, strict: true }], tool_choice: 'required',
  input: [
    { role: 'user', content: [{ type: 'input_text', text: 'hi' }] },
    { type: 'function_call', call_id: 'c1', name: 'f', arguments: '{"on":true}' },
    { type: 'function_call_output', call_id: 'c1', output: 'ok' },
  ],
};
const responsesFormatSeed = { model: TINY_MODEL, input: 'hi', max_output_tokens: 4, text: { format: { type: 'json_schema', name: 'x', schema: toolParameters, strict: true } } };

/** One tiny, quick instance per (solver, problem type); the solve seeds of the fuzz. */
export const PROBLEM_SEEDS: { solver: (typeof SOLVER_NAMES)[number]; type: string; problem: Record<string, unknown> }[] = [
  {
    solver: 'qaoa', type: 'route_optimization',
    problem: { type: 'route_optimization', nodes: [{ id: 'depot', lat: 48.85, lng: 2.35 }, { id: 'a', lat: 48.86, lng: 2.36 }, { id: 'b', lat: 48.84, lng: 2.33 }], constraints: { max_distance_km: 100, vehicle_count: 1 } },
  },
  { solver: 'grover', type: 'pattern_search', problem: { type: 'pattern_search', dataset: 'alpha\nbeta\nMATCH\ngamma', target: { pattern: 'MATCH', min_confidence: 0.5 }, search_space_size: 4 } },
  { solver: 'grover', type: 'qrng', problem: { type: 'qrng', bits: 16, format: 'hex' } },
  {
    solver: 'qkmeans', type: 'clustering',
    problem: { type: 'clustering', data: [{ id: 'p1', features: [0, 0] }, { id: 'p2', features: [0, 1] }, { id: 'p3', features: [5, 5] }, { id: 'p4', features: [5, 6] }], k: 2, max_iterations: 3 },
  },
  {
    solver: 'qsvm', type: 'classification',
    problem: { type: 'classification', training_data: [{ features: [0, 0], label: 'a' }, { features: [0, 1], label: 'a' }, { features: [5, 5], label: 'b' }, { features: [5, 6], label: 'b' }], predict: [{ features: [4, 4] }] },
  },
  {
    solver: 'qubo', type: 'portfolio_allocation',
    problem: { type: 'portfolio_allocation', assets: [{ id: 'A', expected_return: 0.05, risk: 0.1 }, { id: 'B', expected_return: 0.08, risk: 0.2 }, { id: 'C', expected_return: 0.12, risk: 0.3 }], constraints: { max_assets: 2, max_risk: 0.25, min_return: 0.06 } },
  },
];

function problemSchema(solver: string, type: string): z.ZodType {
  const bySolver = new Map<string, Record<string, z.ZodType>>(Object.entries(PROBLEM_SCHEMAS));
  const schema = new Map(Object.entries(bySolver.get(solver) ?? {})).get(type);
  if (schema === undefined) throw new Error(`no schema for ${solver}/${type}`);
  return schema;
}

export const BODY_ROUTES: BodyRoute[] = [
  {
    name: 'chat completions', method: 'POST', path: '/v1/chat/completions', generates: true,
    targets: [
      target('chat', chatSeed, chatCompletionRequestSchema), target('streaming chat', streamingChatSeed, chatCompletionRequestSchema),
      target('chat with tools', toolsChatSeed, chatCompletionRequestSchema), target('structured chat', structuredChatSeed, chatCompletionRequestSchema),
    ],
  },
  {
    name: 'responses', method: 'POST', path: '/v1/responses', generates: true,
    targets: [
      target('response', responsesSeed, responseRequestSchema), target('response with tools', responsesToolsSeed, responseRequestSchema),
      target('structured response', responsesFormatSeed, responseRequestSchema),
    ],
  },
  { name: 'completions', method: 'POST', path: '/v1/completions', generates: true, targets: [target('completion', { model: TINY_MODEL, prompt: 'hello', max_tokens: 2 }, completionRequestSchema)] },
  {
    name: 'embeddings', method: 'POST', path: '/v1/embeddings', generates: false,
    targets: [target('embedding', { model: TINY_MODEL, input: 'hello' }, embeddingRequestSchema), target('token embedding', { model: TINY_MODEL, input: [[1, 2, 3]], encoding_format: 'base64' }, embeddingRequestSchema)],
  },
  {
    name: 'solve', method: 'POST', path: '/api/solve', generates: false,
    targets: PROBLEM_SEEDS.map((p) =>
      target(`solve ${p.solver}/${p.type}`, { solver: p.solver, problem: p.problem, shots: 16, seed: 1 }, solveRequestSchema, [{ at: ['problem'], schema: problemSchema(p.solver, p.type) }]),
    ),
  },
  {
    name: 'solve batch', method: 'POST', path: '/api/solve/batch', generates: false,
    targets: PROBLEM_SEEDS.map((p) =>
      target(`batch ${p.solver}/${p.type}`, { solver: p.solver, problems: [p.problem, p.problem], shots: 16, seed: 1 }, batchRequestSchema, [{ at: ['problems', 0], schema: problemSchema(p.solver, p.type) }]),
    ),
  },
  { name: 'model load', method: 'POST', path: '/api/models/load', generates: false, targets: [target('load', { model: TINY_MODEL }, modelResidencyBodySchema)] },
  { name: 'model unload', method: 'POST', path: '/api/models/unload', generates: false, targets: [target('unload', { model: TINY_MODEL }, modelResidencyBodySchema)] },
  {
    name: 'images (V1.1)', method: 'POST', path: '/v1/images/generations', generates: false,
    targets: [target('image', { model: 'dall-e-3', prompt: 'a cat', n: 1, size: '1024x1024' }, null)],
  },
  {
    name: 'audio (V1.1)', method: 'POST', path: '/v1/audio/transcriptions', generates: false,
    targets: [target('audio', { model: 'whisper-1', file: 'UklGRg==', language: 'en' }, null)],
  },
];

/**
 * Whether a body would make the daemon generate more than MAX_GENERATED_TOKENS (no limit, null,
 * or a large one): those are left out so the fuzz stays bounded in time. Parsed as the daemon
 * would (the last duplicate key wins); a body that does not parse generates nothing.
 */
export function generatesTooMuch(bytes: Buffer): boolean {
  let body: unknown;
  try {
    // secure-json-parse (Fastify's parser) drops a leading BOM before JSON.parse; so does this.
    body = JSON.parse(bytes.toString('utf8').replace(/^\ufeff/, ''));
  } catch {
    return false;
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return false;
  const own = (k: string): unknown => (Object.prototype.hasOwnProperty.call(body, k) ? (body as Record<string, unknown>)[k] : undefined);
  const limit = own('max_completion_tokens') ?? own('max_tokens') ?? own('max_output_tokens');
  return limit === undefined || limit === null || (typeof limit === 'number' && limit > MAX_GENERATED_TOKENS);
}

const extraHeaders = fc.oneof(
  { weight: 10, arbitrary: fc.constant<[string, string][]>([]) },
  {
    weight: 3,
    arbitrary: fc.subarray<[string, string]>([
      ['Origin', 'http://evil.example'], ['Origin', 'null'], ['Origin', 'http://localhost:5173'], ['Accept', 'text/event-stream'], ['Accept-Charset', 'utf-16'],
      ['Content-Encoding', 'gzip'], ['Expect', '100-continue'], ['X-Forwarded-For', '10.0.0.1'], ['Authorization', `Bearer ${'k'.repeat(3000)}`],
      ['Accept-Encoding', 'br, gzip, deflate'], ['Cookie', '__proto__=1; constructor=2'], ['Content-Language', '__proto__'],
    ], { minLength: 1, maxLength: 3 }),
  },
);

/** Hostile requests against one JSON route: schema-derived mutations, text damage, odd headers. */
export function bodyRouteRequest(route: BodyRoute): fc.Arbitrary<HostileRequest> {
  const perTarget = route.targets.map((t) =>
    fc.record({
      mutations: fc.array(mutationOf(t), { minLength: 1, maxLength: 3 }),
      damage: textDamage,
      type: contentType,
      headers: extraHeaders,
      chunked: fc.oneof({ weight: 8, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
    }).map(({ mutations, damage: d, type, headers, chunked }): HostileRequest => {
      const body = mutations.reduce<unknown>((b, m) => applyMutation(b, m), t.seed);
      const { bytes, note } = damage(encodeJson(body), d);
      const all: [string, string][] = type === null ? headers : [['Content-Type', type], ...headers];
      const changes = [...mutations.map(describeMutation), ...(note === null ? [] : [note]), ...(type === 'application/json' ? [] : [`Content-Type ${JSON.stringify(type)}`])];
      return { label: `${t.name}: ${changes.join('; ')}`, method: route.method, target: route.path, headers: all, body: bytes, chunked, foreignCharset: namesForeignCharset(type) };
    }),
  );
  const request = fc.oneof(...perTarget);
  return route.generates ? request.filter((r) => r.body === null || !generatesTooMuch(r.body)) : request;
}

/** Path segments for `/v1/models/:id` and unknown routes. */
const hostileSegment = fc.oneof(
  fc.constantFrom(TINY_MODEL, ...PROTO_KEYS, '', '.', '..', '%2e%2e', '%2F', '%00', '%', '%E0%A4%A', '%ED%A0%80', '%C0%AF', '%FF', '%7e', 'a%20b', '😀', '%F0%9F%98%80', '~', "'", '"', '<>', '{}', '%25'),
  fc.webSegment(),
  fc.constantFrom(1_000, 8_000).map((n) => 'm'.repeat(n)),
);

const queryString = fc.oneof(
  { weight: 6, arbitrary: fc.constant('') },
  { weight: 2, arbitrary: fc.constantFrom('?', '?a=1&a=2', '?__proto__[x]=1', '?constructor=1&toString=2', '?%', '?a=%E0%A4%A', '?stream=true', `?q=${'z'.repeat(3_000)}`, '?#frag', '?a[b][c]=d') },
  { weight: 1, arbitrary: fc.webQueryParameters().map((q) => `?${q}`) },
);

const method = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom('GET') },
  { weight: 3, arbitrary: fc.constantFrom('POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS') },
);

const GET_PATHS = ['/health', '/v1/models', '/v1/models/'] as const;

/** GET /health, /v1/models and /v1/models/:id with hostile ids, queries, methods and bodies. */
export const getRouteRequest: fc.Arbitrary<HostileRequest> = fc
  .record({
    path: fc.constantFrom(...GET_PATHS),
    id: hostileSegment,
    suffix: fc.constantFrom('', '', '', '/', '//', '/x'),
    query: queryString,
    method,
    headers: extraHeaders,
    body: fc.oneof({ weight: 6, arbitrary: fc.constant<string | null>(null) }, { weight: 1, arbitrary: fc.constantFrom('{}', '{"model":"__proto__"}', 'not json') }),
  })
  .map(({ path, id, suffix, query, method: m, headers, body }): HostileRequest => {
    const target = `${path === '/v1/models/' ? `${path}${id}` : path}${suffix}${query}`;
    const hs: [string, string][] = body === null ? headers : [['Content-Type', 'application/json'], ...headers];
    return { label: `${m} ${preview(target, 80)}`, method: m, target, headers: hs, body: body === null ? null : Buffer.from(body), chunked: false, foreignCharset: false };
  });

/** Paths no route serves, under every prefix, with any method. */
export const unknownRouteRequest: fc.Arbitrary<HostileRequest> = fc
  .record({
    prefix: fc.constantFrom('', '/v1', '/api', '/v2', '/V1', '/api/solve', '/v1/chat', '/health'),
    path: fc.oneof(fc.webPath(), fc.array(hostileSegment, { minLength: 1, maxLength: 3 }).map((s) => `/${s.join('/')}`)),
    query: queryString,
    method: fc.oneof(method, fc.constantFrom('PROPFIND', 'MKCOL', 'LINK', 'PURGE', 'QUERY')),
  })
  .map(({ prefix, path, query, method: m }): HostileRequest => {
    const target = `${prefix}${path.startsWith('/') ? path : `/${path}`}${query}`;
    return { label: `unknown route ${m} ${preview(target, 80)}`, method: m, target, headers: [], body: null, chunked: false, foreignCharset: false };
  });

// ---------------------------------------------------------------------------------------------
// Malformed framing, written as raw bytes
// ---------------------------------------------------------------------------------------------

/** A raw exchange: bytes for the socket, and whether a reply can be required. */
export interface FramingCase {
  label: string;
  /** Written in order; `host` is the loopback `host:port` the daemon listens on. */
  bytes(host: string): Buffer;
  /** `end`: half-close after writing; `destroy`: abort (no reply possible); `wait`: keep open. */
  after: 'end' | 'destroy' | 'wait';
  /** True when no complete request was sent and the socket was closed: silence is fine. */
  mayBeSilent: boolean;
  /** HEAD replies have no body. */
  head: boolean;
  /** What makes this request one the daemon must refuse (a reply < 400 breaks the rules), or null. */
  refuse: string | null;
  /**
   * Responses to read before closing (a valid request followed by garbage may get two; one is
   * owed, since a server may answer the garbage and close before the first reply is written).
   */
  responses: number;
}

const CRLF = '\r\n';

function framing(label: string, text: (host: string) => string | Buffer, options: Partial<Pick<FramingCase, 'after' | 'mayBeSilent' | 'head' | 'responses' | 'refuse'>> = {}): FramingCase {
  return {
    label,
    bytes: (host) => {
      const t = text(host);
      return typeof t === 'string' ? Buffer.from(t, 'latin1') : t;
    },
    after: options.after ?? 'wait',
    mayBeSilent: options.mayBeSilent ?? false,
    head: options.head ?? false,
    responses: options.responses ?? 1,
    refuse: options.refuse ?? null,
  };
}

const json = '{"model":"tiny","input":"hi"}';

/** Named framing cases: each known way an HTTP/1.1 request can be malformed. */
export const FRAMING_CASES: FramingCase[] = [
  framing('unknown method FOO', (h) => `FOO /health HTTP/1.1${CRLF}Host: ${h}${CRLF}${CRLF}`),
  framing('lower-case method', (h) => `get /health HTTP/1.1${CRLF}Host: ${h}${CRLF}${CRLF}`),
  framing('NUL in method', (h) => `GE\u0000T /health HTTP/1.1${CRLF}Host: ${h}${CRLF}${CRLF}`),
  framing('PRI (HTTP/2 preface)', () => `PRI * HTTP/2.0${CRLF}${CRLF}SM${CRLF}${CRLF}`),
  framing('HTTP/9.9', (h) => `GET /health HTTP/9.9${CRLF}Host: ${h}${CRLF}${CRLF}`),
  framing('garbage request line', () => `\u0016\u0003\u0001\u0002\u0000\u0001\u0000${CRLF}${CRLF}`),
  framing('request line only spaces', () => `   ${CRLF}${CRLF}`),
  framing('CONNECT', (h) => `CONNECT ${h} HTTP/1.1${CRLF}Host: ${h}${CRLF}${CRLF}`),
  framing('TRACE', (h) => `TRACE /health HTTP/1.1${CRLF}Host: ${h}${CRLF}${CRLF}`),
  framing('OPTIONS without preflight headers', (h) => `OPTIONS /v1/chat/completions HTTP/1.1${CRLF}Host: ${h}${CRLF}${CRLF}`),
  framing('OPTIONS * ', (h) => `OPTIONS * HTTP/1.1${CRLF}Host: ${h}${CRLF}${CRLF}`),
  framing('HEAD unknown route', (h) => `HEAD /nope HTTP/1.1${CRLF}Host: ${h}${CRLF}Connection: close${CRLF}${CRLF}`, { head: true }),
  framing('Content-Length and Transfer-Encoding', (h) => `POST /v1/embeddings HTTP/1.1${CRLF}Host: ${h}${CRLF}Content-Type: application/json${CRLF}Content-Length: ${json.length}${CRLF}Transfer-Encoding: chunked${CRLF}${CRLF}${json.length.toString(16)}${CRLF}${json}${CRLF}0${CRLF}${CRLF}`),
  framing('Content-Length not a number', (h) => `POST /v1/embeddings HTTP/1.1${CRLF}Host: ${h}${CRLF}Content-Type: application/json${CRLF}Content-Length: abc${CRLF}${CRLF}${json}`),
  framing('negative Content-Length', (h) => `POST /v1/embeddings HTTP/1.1${CRLF}Host: ${h}${CRLF}Content-Type: application/json${CRLF}Content-Length: -1${CRLF}${CRLF}${json}`),
  framing('two different Content-Lengths', (h) => `POST /v1/embeddings HTTP/1.1${CRLF}Host: ${h}${CRLF}Content-Type: application/json${CRLF}Content-Length: ${json.length}${CRLF}Content-Length: 5${CRLF}${CRLF}${json}`),
  framing('Content-Length with plus sign', (h) => `POST /v1/embeddings HTTP/1.1${CRLF}Host: ${h}${CRLF}Content-Type: application/json${CRLF}Content-Length: +${json.length}${CRLF}${CRLF}${json}`),
  framing('Content-Length 20 digits', (h) => `POST /v1/embeddings HTTP/1.1${CRLF}Host: ${h}${CRLF}Content-Type: application/json${CRLF}Content-Length: 99999999999999999999${CRLF}${CRLF}${json}`),
  framing('Content-Length above the body limit', (h) => `POST /v1/embeddings HTTP/1.1${CRLF}Host: ${h}${CRLF}Content-Type: application/json${CRLF}Content-Length: 999999999${CRLF}${CRLF}${json}`),
  framing('truncated body, then close', (h) => `POST /v1/embeddings HTTP/1.1${CRLF}Host: ${h}${CRLF}Content-Type: application/json${CRLF}Content-Length: 500${CRLF}${CRLF}${json}`, { after: 'end', mayBeSilent: true }),
  framing('truncated body, then abort', (h) => `POST /api/solve HTTP/1.1${CRLF}Host: ${h}${CRLF}Content-Type: application/json${CRLF}Content-Length: 500${CRLF}${CRLF}{"solver":"qaoa"`, { after: 'destroy', mayBeSilent: true }),
  framing('truncated headers, then close', (h) => `POST /v1/chat/completions HTTP/1.1${CRLF}Host: ${h}${CRLF}Content-Ty`, { after: 'end', mayBeSilent: true }),
  framing('truncated body, kept open (request timeout)', (h) => `POST /v1/embeddings HTTP/1.1${CRLF}Host: ${h}${CRLF}Content-Type: application/json${CRLF}Content-Length: 500${CRLF}${CRLF}${json}`),
  framing('truncated headers, kept open (slowloris)', (h) => `GET /health HTTP/1.1${CRLF}Host: ${h}${CRLF}X-Slow: 1${CRLF}`),
  framing('chunk size not hex', (h) => `POST /v1/embeddings HTTP/1.1${CRLF}Host: ${h}${CRLF}Content-Type: application/json${CRLF}Transfer-Encoding: chunked${CRLF}${CRLF}zz${CRLF}${json}${CRLF}0${CRLF}${CRLF}`),
  framing('chunk size overflow', (h) => `POST /v1/embeddings HTTP/1.1${CRLF}Host: ${h}${CRLF}Content-Type: application/json${CRLF}Transfer-Encoding: chunked${CRLF}${CRLF}fffffffffffffffffff${CRLF}${json}${CRLF}0${CRLF}${CRLF}`),
  framing('Transfer-Encoding gzip, chunked', (h) => `POST /v1/embeddings HTTP/1.1${CRLF}Host: ${h}${CRLF}Content-Type: application/json${CRLF}Transfer-Encoding: gzip, chunked${CRLF}${CRLF}0${CRLF}${CRLF}`),
  framing('Transfer-Encoding chunked, gzip', (h) => `POST /v1/embeddings HTTP/1.1${CRLF}Host: ${h}${CRLF}Content-Type: application/json${CRLF}Transfer-Encoding: chunked, gzip${CRLF}${CRLF}0${CRLF}${CRLF}`),
  framing('Transfer-Encoding unknown', (h) => `POST /v1/embeddings HTTP/1.1${CRLF}Host: ${h}${CRLF}Content-Type: application/json${CRLF}Transfer-Encoding: identity${CRLF}Content-Length: ${json.length}${CRLF}${CRLF}${json}`),
  framing('header flood (300 headers, 30 KB)', (h) => `GET /health HTTP/1.1${CRLF}Host: ${h}${CRLF}${Array.from({ length: 300 }, (_, i) => `X-Flood-${i}: ${'f'.repeat(90)}${CRLF}`).join('')}${CRLF}`),
  framing('3000 tiny headers', (h) => `GET /health HTTP/1.1${CRLF}Host: ${h}${CRLF}${Array.from({ length: 3000 }, (_, i) => `x${i}: 1${CRLF}`).join('')}${CRLF}`),
  framing('one 20 KB header', (h) => `GET /health HTTP/1.1${CRLF}Host: ${h}${CRLF}X-Big: ${'b'.repeat(20_000)}${CRLF}${CRLF}`),
  framing('header without colon', (h) => `GET /health HTTP/1.1${CRLF}Host: ${h}${CRLF}NoColonHere${CRLF}${CRLF}`),
  framing('space before colon', (h) => `GET /health HTTP/1.1${CRLF}Host : ${h}${CRLF}${CRLF}`),
  framing('obs-fold header', (h) => `GET /health HTTP/1.1${CRLF}Host: ${h}${CRLF}X-Fold: a${CRLF} b${CRLF}${CRLF}`),
  framing('NUL in header value', (h) => `GET /health HTTP/1.1${CRLF}Host: ${h}${CRLF}X-Nul: a\u0000b${CRLF}${CRLF}`),
  framing('bare LF line endings', (h) => `GET /health HTTP/1.1\nHost: ${h}\n\n`),
  framing('bare CR line endings', (h) => `GET /health HTTP/1.1\rHost: ${h}\r\r`),
  framing('missing Host (HTTP/1.1)', () => `GET /health HTTP/1.1${CRLF}${CRLF}`, { refuse: 'an HTTP/1.1 request without Host' }),
  framing('empty Host', () => `GET /health HTTP/1.1${CRLF}Host: ${CRLF}${CRLF}`, { refuse: 'an empty Host' }),
  framing('duplicate Host (same)', (h) => `GET /health HTTP/1.1${CRLF}Host: ${h}${CRLF}Host: ${h}${CRLF}${CRLF}`, { refuse: 'a second Host header' }),
  framing('duplicate Host (evil second)', (h) => `GET /health HTTP/1.1${CRLF}Host: ${h}${CRLF}Host: evil.example${CRLF}${CRLF}`, { refuse: 'a second Host header' }),
  framing('Host evil.example', () => `GET /health HTTP/1.1${CRLF}Host: evil.example${CRLF}${CRLF}`, { refuse: 'a Host that is not loopback' }),
  framing('Host 127.0.0.1:80@evil.com', () => `GET /health HTTP/1.1${CRLF}Host: 127.0.0.1:80@evil.com${CRLF}${CRLF}`, { refuse: 'a malformed Host' }),
  framing('Host localhost:18435 evil.com', () => `GET /health HTTP/1.1${CRLF}Host: localhost:18435 evil.com${CRLF}${CRLF}`, { refuse: 'a malformed Host' }),
  framing('Host [::1]x', () => `GET /health HTTP/1.1${CRLF}Host: [::1]x${CRLF}${CRLF}`, { refuse: 'a malformed Host' }),
  framing('Host localhost:99999', () => `GET /health HTTP/1.1${CRLF}Host: localhost:99999${CRLF}${CRLF}`, { refuse: 'a Host with an invalid port' }),
  framing('Host of 300 characters', () => `GET /health HTTP/1.1${CRLF}Host: ${'l'.repeat(290)}.localhost${CRLF}${CRLF}`),
  framing('absolute-form URI, loopback', (h) => `GET http://${h}/health HTTP/1.1${CRLF}Host: ${h}${CRLF}${CRLF}`),
  framing('absolute-form URI, evil authority', (h) => `GET http://evil.example/health HTTP/1.1${CRLF}Host: ${h}${CRLF}${CRLF}`, { refuse: 'an absolute-form target whose authority (which replaces Host, RFC 9112 §3.2.2) is not loopback' }),
  framing('authority-form target on GET', (h) => `GET ${h} HTTP/1.1${CRLF}Host: ${h}${CRLF}${CRLF}`),
  framing('asterisk target on GET', (h) => `GET * HTTP/1.1${CRLF}Host: ${h}${CRLF}${CRLF}`),
  framing('invalid percent-encoding', (h) => `GET /v1/models/%E0%A4%A HTTP/1.1${CRLF}Host: ${h}${CRLF}${CRLF}`),
  framing('lone % in path', (h) => `GET /v1/models/% HTTP/1.1${CRLF}Host: ${h}${CRLF}${CRLF}`),
  framing('encoded lone surrogate in path', (h) => `GET /v1/models/%ED%A0%80 HTTP/1.1${CRLF}Host: ${h}${CRLF}${CRLF}`),
  framing('raw UTF-8 bytes in path', (h) => Buffer.concat([Buffer.from('GET /v1/models/'), Buffer.from('é😀', 'utf8'), Buffer.from(` HTTP/1.1${CRLF}Host: ${h}${CRLF}${CRLF}`)])),
  framing('URL of 12 KB', (h) => `GET /v1/models/${'u'.repeat(12_000)} HTTP/1.1${CRLF}Host: ${h}${CRLF}${CRLF}`),
  framing('URL of 70 KB', (h) => `GET /v1/models/${'u'.repeat(70_000)} HTTP/1.1${CRLF}Host: ${h}${CRLF}${CRLF}`),
  framing('HTTP/1.0 without Host', () => `GET /health HTTP/1.0${CRLF}${CRLF}`),
  framing('Expect: 100-continue then body', (h) => `POST /v1/embeddings HTTP/1.1${CRLF}Host: ${h}${CRLF}Content-Type: application/json${CRLF}Expect: 100-continue${CRLF}Content-Length: ${json.length}${CRLF}${CRLF}${json}`),
  framing('Expect: something else', (h) => `POST /v1/embeddings HTTP/1.1${CRLF}Host: ${h}${CRLF}Content-Type: application/json${CRLF}Expect: 200-ok${CRLF}Content-Length: ${json.length}${CRLF}${CRLF}${json}`),
  framing('charset=utf-16 with a UTF-8 body', (h) => `POST /v1/embeddings HTTP/1.1${CRLF}Host: ${h}${CRLF}Content-Type: application/json; charset=utf-16${CRLF}Content-Length: ${json.length}${CRLF}${CRLF}${json}`, { refuse: 'a body declared charset=utf-16' }),
  framing('valid request, then garbage on the same socket', (h) => `GET /health HTTP/1.1${CRLF}Host: ${h}${CRLF}${CRLF}BREW /pot HTCPCP/1.0${CRLF}${CRLF}`, { responses: 2 }),
];

/** Why a generated Host value must be refused (null: it may be served). HTTP/1.0 may omit Host. */
function hostRefusal(host: string, version: string): string | null {
  if (host === 'ok' || host === 'localhost.') return null;
  if (host === 'none') return version === 'HTTP/1.1' ? 'an HTTP/1.1 request without Host' : null;
  return host === 'twice' ? 'a second Host header' : `Host ${JSON.stringify(host)}`;
}

/** Generated framing: request lines, Host values, body framing and header damage in combination. */
export const framingRequest: fc.Arbitrary<FramingCase> = fc
  .record({
    method: fc.constantFrom('GET', 'POST', 'HEAD', 'FOO', 'get', 'DELETE', 'OPTIONS', 'M'.repeat(64)),
    target: fc.constantFrom('/health', '/v1/models', '/v1/embeddings', '/api/solve', '/v1/models/%E0%A4%A', '/%', 'health', '*', '//health', `/v1/models/${'q'.repeat(9_000)}`),
    version: fc.constantFrom('HTTP/1.1', 'HTTP/1.1', 'HTTP/1.1', 'HTTP/1.0', 'HTTP/2.0', 'HTTP/1.1x', 'http/1.1', ''),
    host: fc.constantFrom<'ok' | 'none' | 'twice' | string>('ok', 'ok', 'ok', 'none', 'twice', 'evil.example', '127.0.0.1:80@evil.com', '[::1]x', 'localhost:99999', '', 'localhost.', '127.1', '0x7f.1', '::1', '127.0.0.1:0'),
    framing: fc.constantFrom('none', 'content-length', 'content-length', 'chunked', 'cl+te', 'bad-cl', 'short-cl-close', 'bad-chunk'),
    extra: fc.constantFrom('none', 'none', 'none', 'flood', 'no-colon', 'nul', 'utf16', 'fold'),
    eol: fc.constantFrom(CRLF, CRLF, CRLF, '\n'),
  })
  .map((r): FramingCase => {
    const label = `${r.method} ${preview(r.target, 40)} ${r.version || '(no version)'} host=${r.host} framing=${r.framing} extra=${r.extra} eol=${JSON.stringify(r.eol)}`;
    const closes = r.framing === 'short-cl-close';
    return framing(label, (h) => {
      const lines = [`${r.method} ${r.target}${r.version === '' ? '' : ` ${r.version}`}`];
      if (r.host === 'ok') lines.push(`Host: ${h}`);
      else if (r.host === 'twice') lines.push(`Host: ${h}`, `Host: ${h}`);
      else if (r.host !== 'none') lines.push(`Host: ${r.host}`);
      // Each exchange ends with its socket (HEAD replies are read to the close).
      lines.push('Connection: close', `Content-Type: application/json${r.extra === 'utf16' ? '; charset=utf-16' : ''}`);
      if (r.extra === 'flood') for (let i = 0; i < 250; i++) lines.push(`X-F${i}: ${'f'.repeat(100)}`);
      if (r.extra === 'no-colon') lines.push('Broken header');
      if (r.extra === 'nul') lines.push('X-Nul: a\u0000b');
      if (r.extra === 'fold') lines.push('X-Fold: a', ' b');
      const bodies = new Map<string, [string[], string]>([
        ['none', [[], '']],
        ['content-length', [[`Content-Length: ${json.length}`], json]],
        ['chunked', [['Transfer-Encoding: chunked'], `${json.length.toString(16)}${r.eol}${json}${r.eol}0${r.eol}${r.eol}`]],
        ['cl+te', [[`Content-Length: ${json.length}`, 'Transfer-Encoding: chunked'], `0${r.eol}${r.eol}`]],
        ['bad-cl', [['Content-Length: 1x'], json]],
        ['short-cl-close', [['Content-Length: 900'], json]],
        ['bad-chunk', [['Transfer-Encoding: chunked'], `g${r.eol}${json}${r.eol}`]],
      ]);
      const [framingHeaders, body] = bodies.get(r.framing)!;
      lines.push(...framingHeaders);
      return `${lines.join(r.eol)}${r.eol}${r.eol}${body}`;
    }, { after: closes ? 'end' : 'wait', mayBeSilent: closes, head: r.method === 'HEAD', refuse: hostRefusal(r.host, r.version) });
  });
