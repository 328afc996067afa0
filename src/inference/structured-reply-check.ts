/**
 * The structured-output guarantee of the embedded engine, checked after generation: a reply
 * that says `stop` (JSON response format) or `tool_calls` parses and validates against the
 * client's own schema. The grammar makes this the rule; the check makes it certain, because a
 * generation can still end before the value is complete (a chat template's stop text such as
 * `<|im_end|>` written inside a JSON string, an end-of-generation token), and a few rules differ
 * between the grammar and a validator (calendar dates, for one).
 *
 * - The value is incomplete (does not parse): the reply says `length`, with the partial text,
 *   as a reply cut by `max_tokens` does; a client never parses it as complete.
 * - The value parses but breaks the schema: a 500 `structured_output_invalid` naming where,
 *   never a `stop` with a value the client's validator would reject (an error, not a retry
 *   inside svc: see `structuredOutputInvalid`).
 */
import { z } from 'zod';
import { ApiError } from '../shared/api-error.ts';
import type { GenerateResult, SamplingOptions } from './language-model.ts';

/** An issue with a value, or undefined when it is valid. */
export type JsonCheck = (value: unknown) => string | undefined;

/** What a reply must be: JSON text for `response_format`, calls of known tools with valid arguments. */
export interface StructuredExpectation {
  /** The reply text is one JSON value (response_format json_object / json_schema). */
  text?: JsonCheck;
  /**
   * Checks of each callable tool's arguments, by name (a Map: names are the client's); `null`:
   * that tool's calls pass unchecked. A call of a name not in the map is invalid.
   */
  tools?: ReadonlyMap<string, JsonCheck | null>;
  /** A call was forced (tool_choice required or named): a reply without one is not complete. */
  callForced?: boolean;
}

/** Validators built from schemas, by schema text, least recently used first. */
const CHECK_CACHE_SIZE = 128;
const checks = new Map<string, JsonCheck>();

/** `json_object`: any JSON object. */
export const anyObject: JsonCheck = (value) =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? undefined : 'the reply is JSON but not an object';

/**
 * The check for a JSON Schema, with zod's JSON Schema reader (zod is svc's one schema library).
 * `fallback`: the schema the grammar was built from (svc's translation of the client's), used
 * when zod cannot read the client's schema; when it can read neither, only well-formed JSON is
 * checked.
 */
export function schemaCheck(schema: Readonly<Record<string, unknown>>, fallback?: unknown): JsonCheck {
  const key = JSON.stringify(schema);
  const cached = checks.get(key);
  if (cached !== undefined) {
    checks.delete(key);
    checks.set(key, cached);
    return cached;
  }
  const check = build(schema) ?? build(fallback) ?? (() => undefined);
  checks.set(key, check);
  if (checks.size > CHECK_CACHE_SIZE) checks.delete(checks.keys().next().value!);
  return check;
}

function build(schema: unknown): JsonCheck | undefined {
  if (schema === undefined) return undefined;
  let validator: z.ZodType;
  try {
    validator = z.fromJSONSchema(schema as Parameters<typeof z.fromJSONSchema>[0]);
  } catch {
    return undefined;
  }
  return (value) => {
    const parsed = validator.safeParse(value);
    if (parsed.success) return undefined;
    const issue = parsed.error.issues[0]!;
    return `${issue.path.length === 0 ? 'the root' : `/${issue.path.join('/')}`}: ${issue.message}`;
  };
}

function parse(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false };
  }
}

/**
 * Why a reply that claims to be complete is not: `incomplete` when its value does not parse or
 * a forced call did not come (the generation ended early), `invalid` when the value parses but
 * breaks the schema. `what` names the part (the reply, a call), `issue` says what is wrong.
 */
export type StructuredFault =
  | { kind: 'incomplete'; what: string; issue: string }
  | { kind: 'invalid'; what: string; issue: string };

/** Characters of an incomplete value quoted in a fault (its end: where it stopped). */
const QUOTED_END = 40;

function unparsable(what: string, text: string): StructuredFault {
  const end = text.length > QUOTED_END ? `…${text.slice(-QUOTED_END)}` : text;
  return { kind: 'incomplete', what, issue: `it is not complete JSON (${text.length} characters, ending ${JSON.stringify(end)})` };
}

/**
 * The fault of a reply that says `stop` or `tool_calls`, or undefined when it keeps the
 * expectation (replies with any other finish reason are not claimed complete: never a fault).
 * A tool whose check is `null` is called as the model wrote it (a non-strict tool of an
 * upstream): its calls are not checked.
 */
export function structuredReplyFault(result: GenerateResult, expected: StructuredExpectation): StructuredFault | undefined {
  if (result.finishReason === 'stop' && expected.text !== undefined) {
    const value = parse(result.text);
    if (!value.ok) return unparsable('reply', result.text);
    const issue = expected.text(value.value);
    return issue === undefined ? undefined : { kind: 'invalid', what: 'reply', issue };
  }
  if (result.finishReason === 'stop' && expected.callForced === true) return { kind: 'incomplete', what: 'reply', issue: 'a tool call was required and none was made' };
  if (result.finishReason !== 'tool_calls' || expected.tools === undefined) return undefined;
  if (result.toolCalls.length === 0) return { kind: 'incomplete', what: 'reply', issue: 'it says tool_calls but has no call' };
  for (const call of result.toolCalls) {
    const what = `call of ${JSON.stringify(call.name)}`;
    const check = expected.tools.get(call.name);
    if (check === null) continue;
    const value = parse(call.arguments);
    if (!value.ok) return unparsable(what, call.arguments);
    const issue = check === undefined ? `there is no tool named ${JSON.stringify(call.name)}` : check(value.value);
    if (issue !== undefined) return { kind: 'invalid', what, issue };
  }
  return undefined;
}

/**
 * The 500 for complete JSON that breaks the schema. Kept an error rather than retried inside svc
 * (docs/runtime.md, Structured output): a stream cannot take back the deltas it sent, and a
 * seeded request must stay reproducible. A seeded or greedy request would write the same value
 * again, so the answer tells clients not to retry it (`x-should-retry: false`, which OpenAI's
 * clients honour); otherwise their own retry samples anew.
 */
export function structuredOutputInvalid(what: string, issue: string, sampling: Pick<SamplingOptions, 'seed' | 'temperature'>): ApiError {
  const repeats = sampling.seed !== undefined || sampling.temperature === 0;
  const hint = repeats
    ? `the same request repeats it (${sampling.seed !== undefined ? 'seed' : 'temperature 0'}): change ${sampling.seed !== undefined ? 'or drop the seed' : 'the temperature'} for another`
    : 'a retry samples anew';
  return new ApiError({
    status: 500, type: 'server_error', code: 'structured_output_invalid',
    message: `The model's ${what} is complete JSON that does not match the schema (${issue}); svc does not pass it on as a normal reply; ${hint}.`,
    ...(repeats ? { headers: { 'x-should-retry': 'false' } } : {}),
  });
}

/**
 * The result as the client gets it: `length` for an incomplete value, an error for an invalid
 * one. `sampling`: the request's seed and temperature (whether a retry would repeat the value).
 */
export function checkStructuredReply(result: GenerateResult, expected: StructuredExpectation, sampling: Pick<SamplingOptions, 'seed' | 'temperature'> = {}): GenerateResult {
  const fault = structuredReplyFault(result, expected);
  if (fault === undefined) return result;
  if (fault.kind === 'incomplete') return { ...result, finishReason: 'length' };
  throw structuredOutputInvalid(fault.what, fault.issue, sampling);
}
