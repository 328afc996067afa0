/**
 * Hostile large request bodies (1–16 MB and beyond) and a driver that sends them to a daemon
 * a few at a time, for the memory test and bench/memory-large-bodies.ts. Every body is refused
 * (400 or 413): the point is what the daemon keeps after reading, parsing and refusing them.
 */
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { prng } from './tiny-gguf.ts';

const MB = 1024 * 1024;

export const LARGE_BODY_KINDS = [
  'chat-over-context',
  'malformed-json',
  'wrong-type-string',
  'wrong-type-many',
  'oversized',
  'solve-over-1mb',
  'many-small-values',
] as const;
export type LargeBodyKind = (typeof LARGE_BODY_KINDS)[number];

export interface LargeBody {
  kind: LargeBodyKind;
  path: string;
  body: Buffer;
  /** The status the daemon must answer with. */
  expect: number;
}

/** `pattern` repeated to exactly `bytes` bytes (Buffer.alloc fills by repeating). */
function filler(pattern: string, bytes: number): Buffer {
  return Buffer.alloc(Math.max(0, bytes), pattern);
}

/** `head` + `pattern`… + `tail`, `bytes` long in all (`pattern` is whole items ending in `sep`). */
function build(head: string, pattern: string, last: string, tail: string, bytes: number): Buffer {
  const fixed = head.length + last.length + tail.length;
  const repeats = Math.max(0, Math.floor((bytes - fixed) / pattern.length));
  return Buffer.concat([Buffer.from(head), filler(pattern, repeats * pattern.length), Buffer.from(last + tail)]);
}

/**
 * One body of `kind`, about `bytes` long. `chat-over-context` is tokenized whole before it is
 * refused (seconds per MB on one core until prompts are bounded by bytes first), so callers keep
 * those smaller.
 */
export function largeBody(kind: LargeBodyKind, bytes: number): LargeBody {
  const chat = '/v1/chat/completions';
  switch (kind) {
    case 'chat-over-context':
      return { kind, path: chat, expect: 400, body: build('{"model":"tiny","messages":[{"role":"user","content":"', 'lorem ipsum ', 'end', '"}]}', bytes) };
    case 'malformed-json':
      // a string that never closes: JSON.parse reads all of it before failing
      return { kind, path: chat, expect: 400, body: build('{"model":"tiny","messages":[{"role":"user","content":"', 'dolor sit ', 'amet', '', bytes) };
    case 'wrong-type-string':
      return { kind, path: chat, expect: 400, body: build('{"model":"tiny","messages":"', 'consectetur ', 'x', '"}', bytes) };
    case 'wrong-type-many':
      // every stop element is of the wrong type: one schema issue per value
      return { kind, path: chat, expect: 400, body: build('{"model":"tiny","messages":[{"role":"user","content":"hi"}],"stop":[', '1,', '1', ']}', bytes) };
    case 'oversized':
      return { kind, path: chat, expect: 413, body: build('{"model":"tiny","messages":[{"role":"user","content":"', 'adipiscing ', 'elit', '"}]}', bytes) };
    case 'solve-over-1mb':
      return {
        kind, path: '/api/solve', expect: 413,
        body: build('{"solver":"qkmeans","problem":{"type":"clustering","data":[', '{"id":"p","features":[0.5,0.25]},', '{"id":"q","features":[0.5,0.25]}', '],"k":2,"max_iterations":10}}', bytes),
      };
    case 'many-small-values':
      // valid messages, then refused for n: 2 after the whole array was validated
      return { kind, path: chat, expect: 400, body: build('{"model":"tiny","n":2,"messages":[', '{"role":"user","content":"a"},', '{"role":"user","content":"b"}', ']}', bytes) };
  }
}

/** The size of body `kind` in a run: 1–16 MB, with the limits each kind is about. */
export function sizeFor(kind: LargeBodyKind, random: () => number, chatMaxMb: number): number {
  const between = (lo: number, hi: number) => Math.round((lo + (hi - lo) * random()) * MB);
  switch (kind) {
    case 'chat-over-context': return between(1, chatMaxMb);
    case 'oversized': return between(16.1, 20);
    // the solve routes read 11 MB at most; beyond 1 MB a problem is refused
    case 'solve-over-1mb': return between(1.1, 10.5);
    default: return between(1, 15.9);
  }
}

export interface SentBody {
  kind: LargeBodyKind;
  bytes: number;
  /** The HTTP status, or the socket error's code. */
  status: number | string;
  expect: number;
  /** The answer's `error.code` when it is the error envelope. */
  errorCode: string | undefined;
  ms: number;
}

/** The `error.code` of an error envelope `{"error":{"message","type","param","code"}}`, else undefined. */
function envelopeCode(text: string): string | undefined {
  try {
    const { error } = JSON.parse(text) as { error?: Record<string, unknown> };
    const complete = error !== undefined && typeof error.message === 'string' && typeof error.type === 'string' && 'param' in error;
    return complete && typeof error.code === 'string' ? error.code : undefined;
  } catch {
    return undefined;
  }
}

/** POSTs one body with its Content-Length; resolves with the status or the socket error's code. */
export function sendBody(url: string, body: LargeBody): Promise<SentBody> {
  const started = performance.now();
  return new Promise((resolve) => {
    const done = (status: number | string, text = '') => resolve({
      kind: body.kind, bytes: body.body.length, status, expect: body.expect, errorCode: envelopeCode(text), ms: performance.now() - started,
    });
    const req = request(new URL(body.path, url), {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-length': body.body.length, connection: 'close' },
    }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => done(res.statusCode ?? 0, Buffer.concat(chunks).toString())).on('error', (e: NodeJS.ErrnoException) => done(e.code ?? e.message));
    });
    req.on('error', (e: NodeJS.ErrnoException) => done(e.code ?? e.message));
    req.end(body.body);
  });
}

export interface DriveOptions {
  count: number;
  concurrency: number;
  seed?: number;
  /** Largest over-context chat prompt, MB (they are tokenized whole). */
  chatMaxMb?: number;
  kinds?: readonly LargeBodyKind[];
  /** Called after each response (e.g. to sample RSS). */
  onResponse?: (sent: SentBody) => void;
}

/** Sends `count` bodies of the kinds in turn, `concurrency` at a time; returns every answer. */
export async function driveLargeBodies(url: string, options: DriveOptions): Promise<SentBody[]> {
  const random = prng(options.seed ?? 7);
  const kinds = options.kinds ?? LARGE_BODY_KINDS;
  const plan = Array.from({ length: options.count }, (_, i) => {
    const kind = kinds[i % kinds.length]!;
    return { kind, bytes: sizeFor(kind, random, options.chatMaxMb ?? 4) };
  });
  const results: SentBody[] = [];
  let next = 0;
  const lane = async () => {
    while (next < plan.length) {
      const { kind, bytes } = plan[next++]!;
      const sent = await sendBody(url, largeBody(kind, bytes));
      results.push(sent);
      options.onResponse?.(sent);
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, lane));
  return results;
}

/**
 * A process's resident set size in MB, from /proc (Linux); `field` names another of its
 * /proc/<pid>/status sizes (`RssAnon`, `RssFile`).
 */
export function rssMb(pid: number, field: 'VmRSS' | 'RssAnon' | 'RssFile' = 'VmRSS'): number {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (match === null) throw new Error(`no ${field} for pid ${pid}`);
  return Number(match[1]) / 1024;
}

/**
 * The resident MB of glibc's main heap (the `[heap]` mapping): freed blocks glibc keeps for
 * reuse stay resident there until malloc_trim, whatever the process does. 0 where there is none.
 */
export function mainHeapMb(pid: number): number {
  const smaps = readFileSync(`/proc/${pid}/smaps`, 'utf8');
  const match = /\[heap\]\n(?:.*\n)*?Rss:\s+(\d+) kB/.exec(smaps);
  return match === null ? 0 : Number(match[1]) / 1024;
}
