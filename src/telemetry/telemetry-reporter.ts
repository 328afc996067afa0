import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { shownEndpoint, type TelemetrySettings } from './telemetry-settings.ts';

/**
 * Everything `basic` telemetry sends, whole: two numbers. Nothing about what ran (no model,
 * solver, prompt, problem or answer) and no identity: no id, host name, address or version,
 * in the body or the headers.
 */
export interface TelemetryPayload {
  /** Seconds since the daemon started. */
  uptime_seconds: number;
  /** Jobs finished in the last 24 hours (docs/telemetry.md says what a job is). */
  daily_job_count: number;
}

export const SEND_TIMEOUT_MS = 10_000;

/** A report that did not reach the endpoint (unreachable, timed out, or not answered 2xx). */
export class TelemetrySendError extends Error {}

export interface TelemetryReporterOptions {
  settings: TelemetrySettings;
  /** Jobs finished in the last 24 hours. */
  dailyJobCount: () => number;
  /** A scheduled report that failed: one warning each, and serving goes on. */
  onWarning: (message: string) => void;
  onSent?: (message: string) => void;
  now?: () => number;
  timeoutMs?: number;
}

export interface SentReport {
  sent_at: string;
  endpoint: string;
  payload: TelemetryPayload;
}

/**
 * `basic` telemetry: the payload, and a timer that posts it once per interval (a day), the
 * first one interval after start. The timer is unref'd, so it never keeps a stopping daemon
 * alive; a report that fails is a warning in the local log and nothing else.
 */
export class TelemetryReporter {
  readonly settings: TelemetrySettings;
  readonly #options: TelemetryReporterOptions;
  readonly #now: () => number;
  readonly #startedAt: number;
  #timer: NodeJS.Timeout | undefined;
  #lastSentAt: string | null = null;

  constructor(options: TelemetryReporterOptions) {
    this.settings = options.settings;
    this.#options = options;
    this.#now = options.now ?? Date.now;
    this.#startedAt = this.#now();
  }

  /** When the last report reached the endpoint; null before the first. */
  get lastSentAt(): string | null {
    return this.#lastSentAt;
  }

  /** The endpoint as shown to people (no credentials or query); null without one. */
  get shownEndpoint(): string | null {
    return this.settings.endpoint === undefined ? null : shownEndpoint(this.settings.endpoint);
  }

  /** What a report sent now would carry. */
  payload(): TelemetryPayload {
    return {
      uptime_seconds: Math.floor((this.#now() - this.#startedAt) / 1000),
      daily_job_count: this.#options.dailyJobCount(),
    };
  }

  /** Starts the daily reports (in `basic` mode; `none` starts nothing). */
  start(): void {
    if (this.settings.mode !== 'basic' || this.#timer !== undefined) return;
    this.#timer = setInterval(() => {
      this.send().catch((error: unknown) => this.#options.onWarning(`telemetry: the report to ${this.shownEndpoint} failed (${(error as Error).message}); the next one goes in ${Math.round(this.settings.intervalMs / 1000)} s`));
    }, this.settings.intervalMs);
    this.#timer.unref();
  }

  close(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /** Posts the payload now; throws TelemetrySendError when it does not get through. Only in `basic` mode. */
  async send(): Promise<SentReport> {
    const endpoint = this.settings.endpoint;
    if (this.settings.mode !== 'basic' || endpoint === undefined) throw new TelemetrySendError('telemetry is none: nothing is sent');
    const payload = this.payload();
    const body = JSON.stringify(payload);
    let status: number;
    try {
      status = await post(endpoint, body, this.#options.timeoutMs ?? SEND_TIMEOUT_MS);
    } catch (error) {
      // node:http can throw on its own (a URIError from the endpoint's user info): whatever
      // stops a report is a report that did not get through (502), never a 500.
      throw error instanceof TelemetrySendError ? error : new TelemetrySendError((error as Error).message);
    }
    if (status < 200 || status > 299) throw new TelemetrySendError(`the endpoint answered ${status}`);
    const sentAt = new Date(this.#now()).toISOString();
    this.#lastSentAt = sentAt;
    this.#options.onSent?.(`telemetry: report sent to ${this.shownEndpoint}`);
    return { sent_at: sentAt, endpoint: this.shownEndpoint!, payload };
  }
}

/**
 * POSTs `body` with node:http(s) rather than fetch: fetch adds headers of its own (accept,
 * accept-language, sec-fetch-mode, accept-encoding), and a report should carry exactly what
 * docs/telemetry.md lists. node:http adds only host and connection (no user-agent), and svc sets
 * no user-agent either: the contract allows uptime and the job count, not svc's version. No
 * agent: one connection, closed after the answer.
 */
function post(endpoint: URL, body: string, timeoutMs: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const send = endpoint.protocol === 'https:' ? httpsRequest : httpRequest;
    const request = send(endpoint, {
      method: 'POST',
      agent: false,
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      signal: AbortSignal.timeout(timeoutMs),
    }, (response: IncomingMessage) => {
      // The answer's body is not needed; read it so the connection can close.
      response.resume();
      response.once('end', () => resolve(response.statusCode ?? 0));
      response.once('error', (error) => reject(new TelemetrySendError(error.message)));
    });
    request.once('error', (error: NodeJS.ErrnoException) => {
      reject(new TelemetrySendError(error.name === 'AbortError' ? `no answer in ${Math.round(timeoutMs / 1000)} s` : (error.code ?? error.message)));
    });
    request.end(body);
  });
}
