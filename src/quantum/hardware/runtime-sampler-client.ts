import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import type { Secret } from '../../shared/secret.ts';
import { hardwareErrors } from './hardware-errors.ts';

/**
 * A client for a quantum provider's REST job API, shaped after the IBM Quantum Runtime (Qiskit
 * Runtime REST API, Sampler V2). What it implements, exactly (docs/solvers.md, "Hardware"):
 *
 * - `POST {base}/jobs` with `{"program_id": "sampler", "backend": <backend>, "params": {"pubs":
 *   [[<OpenQASM 3>, null, <shots>]], "version": 2}}` → `{"id", "backend"}`.
 * - `GET {base}/jobs/{id}` → `{"status"}` or `{"state": {"status", "reason"}}`, status one of
 *   Queued, Running, Completed, Failed, Cancelled (case-insensitive), polled with backoff.
 * - `GET {base}/jobs/{id}/results` → `{"results": [{"data": {"c": {"samples": ["0x5", …],
 *   "num_bits": n}}}]}` (hex register values, one per shot), or `counts` in place of `samples`
 *   (`{"0x5": 12, …}` or bitstrings `{"101": 12}`).
 * - On overall timeout, `POST {base}/jobs/{id}/cancel`, best effort.
 * - Headers: `Authorization: Bearer <token>`, and `Service-CRN` / `IBM-API-Version` when
 *   configured. The token is held as a Secret and only revealed into that header.
 *
 * Not implemented: IAM API-key → bearer exchange (give a bearer token), sessions/batches of the
 * provider, parameterised pubs (circuits arrive bound), error mitigation options.
 */
export interface SamplerClientOptions {
  /** Base of the job API, e.g. https://quantum.cloud.ibm.com/api/v1 (`/jobs` is appended). */
  baseUrl: string;
  backend: string;
  token: Secret | undefined;
  /** Where the token came from, for messages (e.g. SVC_QUANTUM_TOKEN). */
  tokenEnv: string;
  /** Sent as `Service-CRN` (IBM Cloud instance), when set. */
  instance?: string | undefined;
  /** Sent as `IBM-API-Version`, when set. */
  apiVersion?: string | undefined;
  /** Whole job: submit, queue, run, results. */
  timeoutMs: number;
  /** First wait between status polls; doubles up to maxPollMs. */
  pollMs?: number;
  maxPollMs?: number;
  /** One HTTP request. */
  requestTimeoutMs?: number;
}

export interface SamplerJobResult {
  jobId: string;
  backend: string;
  shots: number;
  /** Classical register value (bit i = c[i]) → shots. */
  counts: Map<number, number>;
}

const createdSchema = z.object({ id: z.string().min(1), backend: z.string().optional() });
const statusSchema = z.object({
  status: z.string().optional(),
  state: z.object({ status: z.string().optional(), reason: z.string().nullish() }).optional(),
});
const registerSchema = z.object({
  samples: z.array(z.string()).optional(),
  counts: z.record(z.string(), z.number().int().nonnegative()).optional(),
  num_bits: z.number().int().positive().optional(),
});
const resultsSchema = z.object({
  results: z.array(z.object({ data: z.record(z.string(), registerSchema) })).min(1),
});

const TERMINAL_FAILURES = new Set(['failed', 'cancelled', 'canceled', 'error']);

function registerValue(key: string): number | undefined {
  if (/^0x[0-9a-f]+$/i.test(key)) return Number.parseInt(key.slice(2), 16);
  if (/^[01]+$/.test(key)) return Number.parseInt(key, 2);
  return undefined;
}

export class RuntimeSamplerClient {
  readonly #options: SamplerClientOptions;
  readonly #base: string;
  readonly origin: string;

  constructor(options: SamplerClientOptions) {
    this.#options = options;
    this.#base = options.baseUrl.replace(/\/+$/, '');
    this.origin = new URL(this.#base).origin;
  }

  get backend(): string {
    return this.#options.backend;
  }

  /** Submits one circuit, waits for it, and returns its counts. Throws the ApiError to answer. */
  async sample(qasm: string, shots: number): Promise<SamplerJobResult> {
    const deadline = Date.now() + this.#options.timeoutMs;
    const created = createdSchema.safeParse(
      await this.#request('POST', '/jobs', deadline, {
        program_id: 'sampler',
        backend: this.#options.backend,
        params: { pubs: [[qasm, null, shots]], version: 2 },
      }),
    );
    if (!created.success) throw hardwareErrors.malformed(this.origin, 'a job creation answer without a job id');
    const jobId = created.data.id;
    const backend = created.data.backend ?? this.#options.backend;
    let wait = this.#options.pollMs ?? 1000;
    let last: string | undefined;
    for (;;) {
      const parsed = statusSchema.safeParse(await this.#request('GET', `/jobs/${encodeURIComponent(jobId)}`, deadline, undefined, jobId, last));
      if (!parsed.success) throw hardwareErrors.malformed(this.origin, `a job status for ${jobId} it could not read`);
      const status = parsed.data.state?.status ?? parsed.data.status ?? '';
      last = status;
      const normal = status.toLowerCase();
      if (normal === 'completed') break;
      if (TERMINAL_FAILURES.has(normal)) throw hardwareErrors.jobFailed(jobId, status, (parsed.data.state?.reason ?? '').slice(0, 500));
      const left = deadline - Date.now();
      if (left <= 0) await this.#timeout(jobId, last);
      await sleep(Math.min(wait, left));
      wait = Math.min(wait * 2, this.#options.maxPollMs ?? 15_000);
    }
    const results = resultsSchema.safeParse(await this.#request('GET', `/jobs/${encodeURIComponent(jobId)}/results`, deadline, undefined, jobId, last));
    if (!results.success) throw hardwareErrors.malformed(this.origin, `results for ${jobId} in a shape it could not read`);
    const registers = Object.values(results.data.results[0]!.data);
    if (registers.length !== 1) throw hardwareErrors.malformed(this.origin, `results for ${jobId} with ${registers.length} classical registers (expected one)`);
    const register = registers[0]!;
    const counts = new Map<number, number>();
    const add = (key: string, n: number): void => {
      const value = registerValue(key);
      if (value === undefined) throw hardwareErrors.malformed(this.origin, `results for ${jobId} with a sample it could not read`);
      counts.set(value, (counts.get(value) ?? 0) + n);
    };
    if (register.samples !== undefined) for (const s of register.samples) add(s, 1);
    else if (register.counts !== undefined) for (const [k, n] of Object.entries(register.counts)) add(k, n);
    else throw hardwareErrors.malformed(this.origin, `results for ${jobId} with neither samples nor counts`);
    let total = 0;
    for (const n of counts.values()) total += n;
    return { jobId, backend, shots: total, counts };
  }

  async #timeout(jobId: string, last: string | undefined): Promise<never> {
    // Best effort: a job left queued would still run (and be billed) after we stopped waiting.
    try {
      await this.#request('POST', `/jobs/${encodeURIComponent(jobId)}/cancel`, Date.now() + 5000);
    } catch {
      // the timeout is the answer either way
    }
    throw hardwareErrors.timeout(jobId, Math.round(this.#options.timeoutMs / 1000), last);
  }

  async #request(method: 'GET' | 'POST', path: string, deadline: number, body?: unknown, jobId?: string, last?: string): Promise<unknown> {
    const left = deadline - Date.now();
    if (left <= 0) {
      if (jobId !== undefined) return this.#timeout(jobId, last);
      throw hardwareErrors.timeout(undefined, Math.round(this.#options.timeoutMs / 1000), undefined);
    }
    const headers: Record<string, string> = { accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (this.#options.token !== undefined) headers.authorization = `Bearer ${this.#options.token.reveal()}`;
    if (this.#options.instance !== undefined) headers['service-crn'] = this.#options.instance;
    if (this.#options.apiVersion !== undefined) headers['ibm-api-version'] = this.#options.apiVersion;
    const budget = Math.min(left, this.#options.requestTimeoutMs ?? 30_000);
    let response: Response;
    try {
      response = await fetch(`${this.#base}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), signal: AbortSignal.timeout(budget), redirect: 'error' });
    } catch (error) {
      const name = (error as Error).name;
      if (name === 'TimeoutError' && budget === left && jobId !== undefined) return this.#timeout(jobId, last);
      // undici wraps the socket error: cause.code, or the first of an AggregateError's errors.
      const inner = (error as { cause?: { code?: string; errors?: { code?: string }[] } }).cause;
      const cause = inner?.code ?? inner?.errors?.[0]?.code;
      throw hardwareErrors.unreachable(this.origin, name === 'TimeoutError' ? `no answer within ${Math.round(budget / 1000)} s` : (cause ?? name));
    }
    const text = await response.text().catch(() => '');
    if (response.status === 401 || response.status === 403) throw hardwareErrors.authFailed(this.origin, response.status, this.#options.tokenEnv);
    if (!response.ok) throw hardwareErrors.providerError(this.origin, response.status, providerMessage(text, this.#options.token));
    if (text === '') return {};
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw hardwareErrors.malformed(this.origin, 'an answer that is not JSON');
    }
  }
}

/** The provider's own error text (IBM: `{"errors": [{"message"}]}`), short, with the token cut out should it be echoed. */
function providerMessage(text: string, token: Secret | undefined): string {
  let message = text;
  try {
    const parsed = JSON.parse(text) as { errors?: { message?: unknown }[]; message?: unknown; error?: unknown };
    const first = parsed.errors?.[0]?.message ?? parsed.message ?? parsed.error;
    if (typeof first === 'string') message = first;
  } catch {
    // not JSON: the text itself
  }
  const secret = token?.reveal();
  if (secret !== undefined && secret !== '') message = message.split(secret).join('[redacted]');
  return message.replace(/\s+/g, ' ').trim().slice(0, 300);
}
