/**
 * What `svc models list|ps|info|load|unload` ask a running daemon, with the developer key from
 * `SVC_API_KEY` when one is set (a daemon run with `--require-developer-key` needs it). "No daemon" covers a refused or timed-out
 * connection and an answer that is not svc's (another program on the port); the commands then
 * read the disk instead. A daemon that answers but errors is reported, not hidden.
 */
import { UserError } from '../shared/user-error.ts';

export const DEFAULT_DAEMON_URL = 'http://127.0.0.1:11435';

/** OpenSSL's verdicts on a certificate the client does not trust (a self-signed daemon, a wrong name). */
const UNTRUSTED_CERTIFICATE = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT', 'SELF_SIGNED_CERT_IN_CHAIN', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_SIGNATURE_FAILURE', 'ERR_TLS_CERT_ALTNAME_INVALID',
]);

const TIMEOUT_MS = 3000;

/** `Authorization: Bearer $SVC_API_KEY` when that is set and not blank, else no header: how every svc client command sends its developer key. */
export function developerKeyHeaders(env: NodeJS.ProcessEnv): Record<string, string> {
  const key = env.SVC_API_KEY?.trim();
  return key === undefined || key === '' ? {} : { authorization: `Bearer ${key}` };
}

export class DaemonClient {
  readonly base: string;
  readonly #headers: Record<string, string>;

  /** `headers` go with every call (`developerKeyHeaders(process.env)` for the developer key). */
  constructor(url: string, headers: Record<string, string> = {}) {
    this.#headers = headers;
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

  /** POST to a path (an action such as `/telemetry/send`), with an optional JSON body, allowing `timeoutMs` for it. */
  post(path: string, timeoutMs: number, body?: unknown): Promise<{ status: number; body: unknown } | undefined> {
    return this.#call('POST', path, timeoutMs, body);
  }

  async #call(method: string, path: string, timeoutMs: number, body?: unknown): Promise<{ status: number; body: unknown } | undefined> {
    let response: Response;
    try {
      response = await fetch(`${this.base}${path}`, {
        method, signal: AbortSignal.timeout(timeoutMs),
        headers: { ...this.#headers, accept: 'application/json', ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    } catch (error) {
      // A daemon is there, behind a certificate this process does not trust: say so rather than "no daemon".
      const code = (error as { cause?: { code?: unknown } }).cause?.code;
      if (typeof code === 'string' && UNTRUSTED_CERTIFICATE.has(code)) {
        throw new UserError(`the daemon at ${this.base} serves HTTPS with a certificate this client does not trust (${code}); point NODE_EXTRA_CA_CERTS at its certificate, <data-dir>/transport/identity-*.crt (docs/transport.md)`);
      }
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
    if (got.status !== 200 || !isRecord(got.body) || !Array.isArray(got.body.data)) throw new Error(this.refusal(got, 'GET /v1/models'));
    return got.body.data.filter(isRecord);
  }

  /** The model object, or null when the daemon does not know the id. */
  async model(id: string): Promise<Record<string, unknown> | null> {
    // The route takes the rest of the path, decoded, so ids with '/' and ':' travel as one segment.
    const got = await this.get(`/v1/models/${encodeURIComponent(id)}`);
    if (got === undefined) throw new Error(`the daemon at ${this.base} stopped answering`);
    if (got.status === 404) return null;
    if (got.status !== 200 || !isRecord(got.body)) throw new Error(this.refusal(got, `GET /v1/models/${id}`));
    return got.body;
  }

  /** One line for an answer that is not what was asked for: the daemon's own message if it sent one, and what to do about a key it wants. */
  refusal(got: { status: number; body: unknown }, what: string): string {
    const error = isRecord(got.body) && isRecord(got.body.error) ? got.body.error : undefined;
    const message = typeof error?.message === 'string' ? `: ${error.message}` : '';
    const hint = got.status === 401 ? ' (set SVC_API_KEY to a developer key the daemon accepts)' : '';
    return `the daemon at ${this.base} answered ${got.status} to ${what}${message}${hint}`;
  }
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
