/**
 * How MCP tool handlers reach the local runtime: plain HTTP to `{local_base_url}` (the daemon's
 * own loopback listener inside `svc serve`, `SVC_URL` in the stdio bridge), so a tool does
 * exactly what the same request from any client would, through the same validation and limits.
 */
import { Agent, fetch, type Dispatcher, type Response } from 'undici';
import { isRecord } from '../shared/is-record.ts';

/** Long enough for a chat with a model that must load first on a CPU. */
const DEFAULT_TIMEOUT_MS = 300_000;

/** The runtime answered: its status and parsed JSON body (undefined when not JSON). */
export interface RuntimeAnswer {
  status: number;
  body: unknown;
}

/** No answer from the runtime at all: refused, reset, timed out. The message says which and where. */
export class RuntimeUnreachableError extends Error {
  override name = 'RuntimeUnreachableError';
}

/** The runtime answered 4xx/5xx: its envelope's message, code and status, for the tool error. */
export class RuntimeAnswerError extends Error {
  override name = 'RuntimeAnswerError';
  readonly status: number;
  readonly code: string | undefined;

  constructor(status: number, message: string, code: string | undefined) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

export interface LocalRuntimeClientOptions {
  /** `http://127.0.0.1:11435`, or a function read at each call (the daemon knows its port only after listening). */
  baseUrl: string | (() => string);
  timeoutMs?: number;
  /** Sent with every request: the MCP caller's `Authorization`, so developer keys apply to tools too. */
  headers?: Readonly<Record<string, string>>;
  /** The daemon's own certificate when it serves HTTPS (--pqc-transport): the only one trusted. */
  ca?: string | undefined;
  /** The key-exchange groups the daemon accepts (ml-kem-1024 alone excludes a default client's). */
  groups?: readonly string[] | undefined;
}


/** The message of svc's error envelope (`{error:{message,code}}`), or a generic line. */
function errorOf(answer: RuntimeAnswer, method: string, path: string): RuntimeAnswerError {
  const error = isRecord(answer.body) && isRecord(answer.body.error) ? answer.body.error : undefined;
  const message = typeof error?.message === 'string' ? error.message : `the local runtime answered ${answer.status} to ${method} ${path}`;
  const code = typeof error?.code === 'string' ? error.code : undefined;
  return new RuntimeAnswerError(answer.status, message, code);
}

export class LocalRuntimeClient {
  readonly #baseUrl: () => string;
  readonly #timeoutMs: number;
  readonly #headers: Readonly<Record<string, string>>;
  readonly #dispatcher: Dispatcher | undefined;

  constructor(options: LocalRuntimeClientOptions, dispatcher?: Dispatcher) {
    const base = options.baseUrl;
    this.#baseUrl = typeof base === 'string' ? () => base : base;
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.#headers = options.headers ?? {};
    this.#dispatcher = dispatcher ?? (options.ca === undefined ? undefined : new Agent({ connect: { ca: options.ca, ...(options.groups === undefined ? {} : { ecdhCurve: options.groups.join(':') }) } }));
  }

  /** The same runtime, with `headers` on each request as well. */
  withHeaders(headers: Readonly<Record<string, string>>): LocalRuntimeClient {
    return new LocalRuntimeClient({ baseUrl: this.#baseUrl, timeoutMs: this.#timeoutMs, headers: { ...this.#headers, ...headers } }, this.#dispatcher);
  }

  get baseUrl(): string {
    return this.#baseUrl().replace(/\/+$/, '');
  }

  /** Any answer the runtime gives; throws RuntimeUnreachableError only when none comes. */
  async request(method: 'GET' | 'POST', path: string, body?: unknown, signal?: AbortSignal): Promise<RuntimeAnswer> {
    const base = this.baseUrl;
    const timeout = AbortSignal.timeout(this.#timeoutMs);
    let response: Response;
    try {
      response = await fetch(`${base}${path}`, {
        method,
        ...(this.#dispatcher === undefined ? {} : { dispatcher: this.#dispatcher }),
        headers: { ...this.#headers, accept: 'application/json', ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: signal === undefined ? timeout : AbortSignal.any([timeout, signal]),
      });
    } catch (error) {
      if (timeout.aborted) throw new RuntimeUnreachableError(`the svc daemon at ${base} did not answer within ${Math.round(this.#timeoutMs / 1000)} s`);
      if (signal?.aborted === true) throw error;
      const cause = (error as { cause?: { code?: unknown } }).cause?.code;
      throw new RuntimeUnreachableError(
        `the svc daemon at ${base} is unreachable${typeof cause === 'string' ? ` (${cause})` : ''}; start it with \`svc serve\` (or point SVC_URL at it)`,
      );
    }
    const text = await response.text();
    let parsed: unknown;
    try {
      parsed = text === '' ? undefined : JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    return { status: response.status, body: parsed };
  }

  /** A 2xx answer, or RuntimeAnswerError with the runtime's own message. */
  async call(method: 'GET' | 'POST', path: string, body?: unknown, signal?: AbortSignal): Promise<RuntimeAnswer> {
    const answer = await this.request(method, path, body, signal);
    if (answer.status < 200 || answer.status >= 300) throw errorOf(answer, method, path);
    return answer;
  }

  /** A 2xx answer's body, or RuntimeAnswerError with the runtime's own message. */
  async json(method: 'GET' | 'POST', path: string, body?: unknown, signal?: AbortSignal): Promise<unknown> {
    return (await this.call(method, path, body, signal)).body;
  }
}
