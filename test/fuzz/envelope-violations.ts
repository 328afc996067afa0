/**
 * What every daemon response must satisfy, whatever was sent (issue 7): no 5xx but the documented
 * 501 (coming in V1.1) and 503 (busy, shutting down, substrate unavailable); every status ≥ 400
 * carries the JSON envelope `{error:{message,type,param,code}}`, parser errors included; and
 * error messages are bounded, so user input is never echoed whole. A solve batch's failed items
 * (answered inside a 200) keep the same rules.
 */
import type { RawExchange, RawResponse } from './raw-exchange.ts';

/** Error messages stay under this many bytes: user input in them must be truncated. */
export const MAX_MESSAGE_BYTES = 2048;

export interface Envelope {
  error: { message: string; type: string; param: string | null; code: string | null };
}

/** The envelope in a body, or why it is not one. */
export function parseEnvelope(body: Buffer): Envelope | string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    return `body is not JSON: ${JSON.stringify(body.subarray(0, 160).toString('utf8'))}${body.length > 160 ? ` (${body.length} bytes)` : ''}`;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return `body is not an object: ${JSON.stringify(parsed)?.slice(0, 160)}`;
  const keys = Object.keys(parsed);
  if (keys.length !== 1 || keys[0] !== 'error') return `body is not the envelope (keys ${JSON.stringify(keys)}): ${JSON.stringify(parsed).slice(0, 200)}`;
  const error = (parsed as { error: unknown }).error;
  return envelopeFieldProblem(error) ?? (parsed as Envelope);
}

/** Why `error` is not the envelope's inner object (null when it is). */
function envelopeFieldProblem(error: unknown): string | null {
  if (typeof error !== 'object' || error === null || Array.isArray(error)) return `error is not an object: ${JSON.stringify(error)?.slice(0, 160)}`;
  const e = error as Record<string, unknown>;
  const wrong = [
    typeof e.message === 'string' ? null : 'message',
    typeof e.type === 'string' ? null : 'type',
    e.code === null || typeof e.code === 'string' ? null : 'code',
    e.param === null || typeof e.param === 'string' ? null : 'param',
  ].filter((w) => w !== null);
  if (wrong.length > 0) return `envelope fields of the wrong type or missing (${wrong.join(', ')}): ${JSON.stringify(error).slice(0, 200)}`;
  return null;
}

/**
 * A solve batch answers 200 with each problem's own status: a failed item carries the envelope's
 * fields, and an `internal_error` item is a 500 in hiding.
 */
function batchItemViolations(body: Buffer): string[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    return [];
  }
  const results = (parsed as { results?: unknown } | null)?.results;
  if (!Array.isArray(results)) return [];
  return results.flatMap((item: { index?: unknown; status?: unknown; error?: unknown }) => {
    if (item?.status !== 'failed') return [];
    const problem = envelopeFieldProblem(item.error);
    if (problem !== null) return [`batch item ${String(item.index)} failed: ${problem}`];
    const { code, message } = item.error as { code: string | null; message: string };
    if (code === 'internal_error') return [`batch item ${String(item.index)} failed with internal_error (a 500 inside a 200)`];
    return Buffer.byteLength(message, 'utf8') >= MAX_MESSAGE_BYTES ? [`batch item ${String(item.index)} (${code}): error message echoes input`] : [];
  });
}

/** Why a response breaks the rules (empty when it keeps them). */
export function envelopeViolations(response: RawResponse, request: { head: boolean; foreignCharset: boolean; refuse?: string | null }): string[] {
  const problems: string[] = [];
  const { status } = response;
  // A HEAD reply has no body, unless the parser refused the request before knowing it was HEAD.
  const envelope = status >= 400 && !(request.head && response.body.length === 0) ? parseEnvelope(response.body) : null;
  const code = envelope !== null && typeof envelope === 'object' ? envelope.error.code : undefined;
  if (status >= 500 && !(status === 501 && code === 'coming_in_v1_1') && status !== 503) {
    problems.push(`status ${status}${code === undefined ? '' : ` (${code})`}: no 5xx but 501 coming_in_v1_1 and 503`);
  }
  if (typeof envelope === 'string') problems.push(`status ${status}: ${envelope}`);
  if (envelope !== null && typeof envelope === 'object') {
    const contentType = response.headers.get('content-type') ?? '';
    if (!/^application\/json\b/i.test(contentType)) problems.push(`status ${status}: Content-Type ${JSON.stringify(contentType)}, not application/json`);
    const bytes = Buffer.byteLength(envelope.error.message, 'utf8');
    if (bytes >= MAX_MESSAGE_BYTES) problems.push(`status ${status} (${code}): error message of ${bytes} bytes echoes input (limit ${MAX_MESSAGE_BYTES}): ${JSON.stringify(envelope.error.message.slice(0, 120))}…`);
  }
  if (status === 200) problems.push(...batchItemViolations(response.body));
  if (request.foreignCharset && status >= 200 && status < 300) problems.push(`status ${status}: a body declared in a non-UTF-8 charset was accepted (read as UTF-8)`);
  if (request.refuse != null && status < 400) problems.push(`status ${status}: ${request.refuse} was served; it must be refused (a status ≥ 400)`);
  return problems;
}

/** What an exchange needs from the daemon: whether silence is acceptable, how many replies. */
export interface ExchangeExpectation {
  head: boolean;
  foreignCharset: boolean;
  /** No complete request was sent and the socket was closed: no reply is owed. */
  mayBeSilent: boolean;
  /** Replies owed (at least). */
  responses: number;
  /** What makes the request one to refuse (any reply < 400 breaks the rules), or null. */
  refuse?: string | null;
}

/** What went wrong with one exchange: no reply, an unparseable one, or a reply breaking the rules. */
export function exchangeViolations(ex: RawExchange, expect: ExchangeExpectation): string[] {
  if (ex.unparsed !== null) return [`unparseable response: ${JSON.stringify(ex.unparsed)}`];
  if (ex.timedOut && !expect.mayBeSilent) return [`no response within ${Math.round(ex.ms)} ms`];
  if (ex.responses.length < expect.responses && !expect.mayBeSilent) {
    return [`connection closed after ${ex.responses.length} of ${expect.responses} responses${ex.error === null ? '' : ` (${ex.error})`}`];
  }
  return ex.responses.flatMap((r) => envelopeViolations(r, expect));
}
