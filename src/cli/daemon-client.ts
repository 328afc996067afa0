/**
 * What `svc models list|ps|info` ask a running daemon. "No daemon" covers a refused or timed-out
 * connection and an answer that is not svc's (another program on the port); the commands then
 * read the disk instead. A daemon that answers but errors is reported, not hidden.
 */
export const DEFAULT_DAEMON_URL = 'http://127.0.0.1:11435';

const TIMEOUT_MS = 3000;

export class DaemonClient {
  readonly base: string;

  constructor(url: string) {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new Error(`--url '${url}' is not a URL`);
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error(`--url '${url}' is not an http(s) URL`);
    this.base = `${parsed.origin}${parsed.pathname.replace(/\/+$/, '')}`;
  }

  /** GET a JSON path: the parsed body and status, or undefined when no svc daemon answers. */
  get(path: string): Promise<{ status: number; body: unknown } | undefined> {
    return this.#call('GET', path, TIMEOUT_MS);
  }

  /** POST to a path without a body (an action such as `/telemetry/send`), allowing `timeoutMs` for it. */
  post(path: string, timeoutMs: number): Promise<{ status: number; body: unknown } | undefined> {
    return this.#call('POST', path, timeoutMs);
  }

  async #call(method: string, path: string, timeoutMs: number): Promise<{ status: number; body: unknown } | undefined> {
    let response: Response;
    try {
      response = await fetch(`${this.base}${path}`, { method, signal: AbortSignal.timeout(timeoutMs), headers: { accept: 'application/json' } });
    } catch {
      return undefined;
    }
    try {
      return { status: response.status, body: await response.json() };
    } catch {
      return undefined;
    }
  }

  /** `/health` if an svc daemon answers there. */
  async health(): Promise<Record<string, unknown> | undefined> {
    const got = await this.get('/health');
    if (got === undefined || got.status !== 200 || !isRecord(got.body) || got.body.status !== 'ok') return undefined;
    return got.body;
  }

  async models(): Promise<Record<string, unknown>[]> {
    const got = await this.get('/v1/models');
    if (got === undefined) throw new Error(`the daemon at ${this.base} stopped answering`);
    if (got.status !== 200 || !isRecord(got.body) || !Array.isArray(got.body.data)) throw new Error(`the daemon at ${this.base} answered ${got.status} to GET /v1/models`);
    return got.body.data.filter(isRecord);
  }

  /** The model object, or null when the daemon does not know the id. */
  async model(id: string): Promise<Record<string, unknown> | null> {
    // The route takes the rest of the path, decoded, so ids with '/' and ':' travel as one segment.
    const got = await this.get(`/v1/models/${encodeURIComponent(id)}`);
    if (got === undefined) throw new Error(`the daemon at ${this.base} stopped answering`);
    if (got.status === 404) return null;
    if (got.status !== 200 || !isRecord(got.body)) throw new Error(`the daemon at ${this.base} answered ${got.status} to GET /v1/models/${id}`);
    return got.body;
  }
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
