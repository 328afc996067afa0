import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { ApiError } from '../../shared/api-error.ts';
import type { Secret } from '../../shared/secret.ts';
import { decodeSamplerCounts, SamplerResultError } from './decode-sampler-counts.ts';
import { hardwareErrors, spell } from './hardware-errors.ts';

/**
 * A client for a quantum provider's REST job API, shaped after the IBM Quantum Runtime (Qiskit
 * Runtime REST API, Sampler V2). What it implements, exactly (docs/solvers.md, "Hardware"):
 *
 * - `POST {base}/jobs` with `{"program_id": "sampler", "backend": <backend>, "params": {"pubs":
 *   [[<OpenQASM 3>, null, <shots>]], "version": 2}}` → `{"id", "backend"}`.
 * - `GET {base}/jobs/{id}` → `{"status"}` or `{"state": {"status", "reason"}}`, polled with
 *   backoff: Completed ends it; any status starting with cancel/fail/error (case-insensitive,
 *   e.g. `Cancelled - Ran too long`) is a failed job; anything else keeps polling. Transient
 *   GET failures (no answer, 429, 5xx) are retried with backoff until the deadline.
 * - `GET {base}/jobs/{id}/results` → `{"results": [{"data": {"c": {"samples": ["0x5", …],
 *   "num_bits": n}}}]}` (hex register values, one per shot), or `counts` in place of `samples`
 *   (`{"0x5": 12, …}` or bitstrings `{"101": 12}`), checked against the circuit's register and
 *   the shots asked for (decode-sampler-counts.ts) before any solver sees them.
 * - `POST {base}/jobs/{id}/cancel`, best effort, whenever it gives up on a job it created
 *   (deadline, a failed request, an abort signal), even one given up on while its creating POST
 *   was out.
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

/** One circuit to run. */
export interface SampleJob {
  /** OpenQASM 3 in the target's basis. */
  qasm: string;
  shots: number;
  /** Width of the classical register it measures into: results that do not fit it are refused. */
  bits: number;
  /** Shutdown, the client gone, the solve's deadline: the job is cancelled and this rejects with the signal's reason. */
  signal?: AbortSignal | undefined;
  /** Filled in as the job goes (its id, the last status seen), for whoever gives up on it to say where it was. */
  progress?: SampleProgress | undefined;
}

export interface SampleProgress {
  jobId?: string;
  status?: string;
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

  /**
   * Submits one circuit, waits for it, and returns its counts. Throws the ApiError to answer.
   * Once the job exists, every way of giving up on it — a failed poll or results request, the
   * deadline, `signal` (shutdown, client gone) — asks the provider to cancel it first: a job left
   * queued would still run, and be billed, after nobody waits for it.
   */
  async sample(run: SampleJob): Promise<SamplerJobResult> {
    const { qasm, shots, signal } = run;
    const deadline = Date.now() + this.#options.timeoutMs;
    abandonIfAborted(signal);
    const created = createdSchema.safeParse(
      await this.#create(deadline, signal, {
        program_id: 'sampler',
        backend: this.#options.backend,
        params: { pubs: [[qasm, null, shots]], version: 2 },
      }),
    );
    if (!created.success) throw hardwareErrors.malformed(this.origin, 'a job creation answer without a job id');
    const jobId = created.data.id;
    const backend = created.data.backend ?? this.#options.backend;
    const job: Job = { id: jobId, ended: false, progress: run.progress ?? {} };
    job.progress.jobId = jobId;
    try {
      return await this.#await(job, backend, deadline, run);
    } catch (error) {
      if (!job.ended) await this.#cancel(jobId);
      throw error;
    }
  }

  /**
   * `POST /jobs`, not cut short by `signal`: once the request is out the provider may create the
   * job whatever svc does, and only the answer carries its id. A caller who gives up meanwhile is
   * answered when the POST settles (its own time limit), after the job it created, if any, has
   * been asked to cancel.
   */
  async #create(deadline: number, signal: AbortSignal | undefined, body: unknown): Promise<unknown> {
    const creating = this.#request('POST', '/jobs', deadline, undefined, body);
    if (signal === undefined) return creating;
    let onAbort: () => void = () => undefined;
    const aborted = new Promise<typeof ABORTED>((resolve) => {
      onAbort = () => resolve(ABORTED);
      signal.addEventListener('abort', onAbort, { once: true });
    });
    try {
      const first = await Promise.race([creating, aborted]);
      if (first !== ABORTED) return first;
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
    const late = createdSchema.safeParse(await creating.catch(() => undefined));
    if (late.success) await this.#cancel(late.data.id);
    abandonIfAborted(signal);
    throw new Error('unreachable: the signal has aborted');
  }

  async #await(job: Job, backend: string, deadline: number, run: SampleJob): Promise<SamplerJobResult> {
    const signal = run.signal;
    const jobId = job.id;
    const path = `/jobs/${encodeURIComponent(jobId)}`;
    let wait = this.#options.pollMs ?? 1000;
    for (;;) {
      const parsed = statusSchema.safeParse(await this.#get(path, deadline, signal, job));
      if (!parsed.success) throw hardwareErrors.malformed(this.origin, `a job status for ${jobId} it could not read`);
      const status = parsed.data.state?.status ?? parsed.data.status ?? '';
      job.progress.status = status;
      if (status.toLowerCase() === 'completed') break;
      if (isTerminalFailure(status)) {
        job.ended = true;
        throw hardwareErrors.jobFailed(jobId, status, redact((parsed.data.state?.reason ?? '').slice(0, 500), this.#options.token));
      }
      wait = await this.#pause(wait, deadline, signal, job);
    }
    job.ended = true;
    const body = await this.#get(`${path}/results`, deadline, signal, job);
    try {
      const { counts, total } = decodeSamplerCounts(body, { bits: run.bits, shots: run.shots });
      return { jobId, backend, shots: total, counts };
    } catch (error) {
      if (!(error instanceof SamplerResultError)) throw error;
      throw hardwareErrors.malformed(this.origin, `results for ${jobId} that svc cannot use: ${redact(error.message, this.#options.token)}`);
    }
  }

  /** Waits `wait` (at most to the deadline) and returns the next, doubled wait; 504 once the deadline has passed. */
  async #pause(wait: number, deadline: number, signal: AbortSignal | undefined, job: Job): Promise<number> {
    const left = deadline - Date.now();
    if (left <= 0) throw hardwareErrors.timeout(job.id, this.#options.timeoutMs, job.progress.status);
    try {
      await sleep(Math.min(wait, left), undefined, { signal });
    } catch {
      abandonIfAborted(signal);
    }
    return Math.min(wait * 2, this.#options.maxPollMs ?? 15_000);
  }

  /**
   * A GET about a job that exists, retried with backoff until the deadline while the failure is
   * transient (no answer, a dropped connection, 429, 5xx): a provider's brief hiccup should not
   * throw away a job that may have waited an hour in its queue.
   */
  async #get(path: string, deadline: number, signal: AbortSignal | undefined, job: Job): Promise<unknown> {
    let wait = this.#options.pollMs ?? 1000;
    for (;;) {
      if (deadline - Date.now() <= 0) throw hardwareErrors.timeout(job.id, this.#options.timeoutMs, job.progress.status);
      try {
        return await this.#request('GET', path, deadline, signal);
      } catch (error) {
        if (!(error instanceof ApiError) || !TRANSIENT.has(error) || signal?.aborted === true) throw error;
      }
      wait = await this.#pause(wait, deadline, signal, job);
    }
  }

  /** Best effort: the answer to the caller is decided already. */
  async #cancel(jobId: string): Promise<void> {
    try {
      await this.#request('POST', `/jobs/${encodeURIComponent(jobId)}/cancel`, Date.now() + 5000, undefined);
    } catch {
      // the provider may be the reason we gave up; nothing more to do
    }
  }

  async #request(method: 'GET' | 'POST', path: string, deadline: number, signal: AbortSignal | undefined, body?: unknown): Promise<unknown> {
    abandonIfAborted(signal);
    const left = deadline - Date.now();
    if (left <= 0) throw hardwareErrors.timeout(undefined, this.#options.timeoutMs, undefined);
    const headers: Record<string, string> = { accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (this.#options.token !== undefined) headers.authorization = `Bearer ${this.#options.token.reveal()}`;
    if (this.#options.instance !== undefined) headers['service-crn'] = this.#options.instance;
    if (this.#options.apiVersion !== undefined) headers['ibm-api-version'] = this.#options.apiVersion;
    const budget = Math.min(left, this.#options.requestTimeoutMs ?? 30_000);
    const timeout = AbortSignal.timeout(budget);
    let response: Response;
    let text: string;
    try {
      response = await fetch(`${this.#base}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), signal: signal === undefined ? timeout : AbortSignal.any([timeout, signal]), redirect: 'error' });
      text = await response.text().catch(() => '');
    } catch (error) {
      abandonIfAborted(signal);
      const name = (error as Error).name;
      // undici wraps the socket error: cause.code, or the first of an AggregateError's errors.
      const inner = (error as { cause?: { code?: string; errors?: { code?: string }[] } }).cause;
      const cause = inner?.code ?? inner?.errors?.[0]?.code;
      throw transient(hardwareErrors.unreachable(this.origin, name === 'TimeoutError' ? `no answer within ${spell(budget)}` : (cause ?? name)));
    }
    if (response.status === 401 || response.status === 403) throw hardwareErrors.authFailed(this.origin, response.status, this.#options.tokenEnv);
    if (!response.ok) {
      const error = hardwareErrors.providerError(this.origin, response.status, providerMessage(text, this.#options.token));
      throw response.status === 429 || response.status >= 500 ? transient(error) : error;
    }
    if (text === '') return {};
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw hardwareErrors.malformed(this.origin, `an answer to ${method} ${path} that is not JSON`);
    }
  }
}

/** A job this client created: its id, whether it has ended (then there is nothing to cancel), its progress (last status polled). */
interface Job {
  id: string;
  ended: boolean;
  progress: SampleProgress;
}

/** What #create's race sees when the caller gives up before the job's id has arrived. */
const ABORTED: unique symbol = Symbol('aborted');

/** The errors #request marks as worth another try while the deadline allows: no answer, a dropped connection, HTTP 429 or 5xx. */
const TRANSIENT = new WeakSet<ApiError>();

function transient(error: ApiError): ApiError {
  TRANSIENT.add(error);
  return error;
}

/**
 * IBM's statuses are not one closed list: besides `Failed` and `Cancelled` there are
 * `Cancelled - Ran too long`, `Canceled - …`, `ERROR`. Anything that starts as a cancellation,
 * failure or error is the end of the job, not a reason to keep polling until the deadline.
 */
export function isTerminalFailure(status: string): boolean {
  return /^\s*(cancel|fail|error)/i.test(status);
}

/** Giving up because the caller went away or the service is closing: the signal's ApiError, or a 503. */
function abandonIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted !== true) return;
  if (signal.reason instanceof ApiError) throw signal.reason;
  throw ApiError.busy('The hardware job was abandoned: the request was closed or the service is shutting down.', 5, 503, 'shutting_down');
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
  return redact(message, token).replace(/\s+/g, ' ').trim().slice(0, 300);
}

/** Provider text with the token cut out, should the provider echo it (error messages, a job's failure reason). */
function redact(text: string, token: Secret | undefined): string {
  const secret = token?.reveal();
  return secret !== undefined && secret !== '' ? text.split(secret).join('[redacted]') : text;
}
