import { chmodSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { createStream, type RotatingFileStream } from 'rotating-file-stream';
import type { JobLog, JobRecord } from '../shared/job-log.ts';
import { RecentJobCount } from './recent-job-count.ts';

/** `<data-dir>/logs/jobs.ndjson`; rotated files are `jobs.ndjson.1` (newest) to `.N`. */
export const JOB_LOG_FILE = 'jobs.ndjson';
export const DEFAULT_JOB_LOG_SIZE = '10M';
export const DEFAULT_JOB_LOG_ROTATED = 4;
/** Lines waiting for the disk beyond this are dropped rather than held: a stalled disk must not grow the heap. */
const MAX_BUFFERED_BYTES = 1024 * 1024;
/** After a write failure (disk full, permissions), how long before the file is opened again. */
const REOPEN_AFTER_MS = 60_000;

export interface JobLogFileOptions {
  /** The folder of the log: `<data-dir>/logs`. */
  dir: string;
  /** Size at which the file rotates, as rotating-file-stream takes it (`10M`, `1K`). */
  size?: string;
  /** Rotated files kept beside the current one. */
  rotated?: number;
  /** Told once per run of failures (and again only after writing worked in between). */
  onWarning: (message: string, error: unknown) => void;
  /** Told when writing works again after a warning. */
  onRecovered?: (message: string) => void;
  now?: () => number;
}

/** One line of the job log: what ran, for how long, and how it ended; never content. */
export interface JobLogLine {
  time: string;
  kind: JobRecord['kind'];
  name: string | null;
  duration_ms: number;
  outcome: JobRecord['outcome'];
  error_type: string | null;
}

/**
 * The local job log: one JSON line per finished job, appended through rotating-file-stream
 * (classic logrotate numbering, rotated by size), and the count of the last 24 hours that
 * `basic` telemetry reports. Writing is asynchronous and never throws into the caller: a full
 * disk or an unwritable folder is one warning, the lines meanwhile are dropped, and the file is
 * tried again a minute later. The count does not depend on the file.
 */
export class JobLogFile implements JobLog {
  readonly recent = new RecentJobCount();
  readonly #options: JobLogFileOptions;
  readonly #now: () => number;
  #stream: RotatingFileStream | undefined;
  #reopenAt = 0;
  #warned = false;
  /** Lines are being dropped: more than MAX_BUFFERED_BYTES is waiting for the disk. */
  #dropping = false;
  #closed = false;

  constructor(options: JobLogFileOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
  }

  /** Where the current file is. */
  get path(): string {
    return join(this.#options.dir, JOB_LOG_FILE);
  }

  record(job: JobRecord): void {
    const now = this.#now();
    this.recent.add(now);
    const line: JobLogLine = {
      time: new Date(now).toISOString(),
      kind: job.kind,
      name: job.name,
      duration_ms: Math.max(0, Math.round(job.durationMs)),
      outcome: job.outcome,
      error_type: job.errorType,
    };
    const stream = this.#open();
    if (stream === undefined) return;
    if (stream.writableLength > MAX_BUFFERED_BYTES) {
      if (!this.#dropping) {
        // Once per stall: a line per dropped job would flood the log the disk cannot keep up with.
        this.#dropping = true;
        this.#options.onWarning(`job log: over 1 MB is waiting to be written to ${this.path} (a slow disk); jobs are not logged until it catches up (the daily count still counts them)`, undefined);
      }
      return;
    }
    stream.write(`${JSON.stringify(line)}\n`, (error) => {
      if (error == null && this.#dropping && stream.writableLength === 0) this.#dropping = false;
      if (error == null && this.#warned && this.#stream === stream) {
        this.#warned = false;
        this.#options.onRecovered?.(`job log: writing to ${this.path} again`);
      }
    });
  }

  /** Jobs finished in the last 24 hours. */
  dailyCount(): number {
    return this.recent.count(this.#now());
  }

  /** Writes what is buffered and closes the file. */
  async close(): Promise<void> {
    this.#closed = true;
    const stream = this.#stream;
    this.#stream = undefined;
    if (stream === undefined || stream.destroyed) return;
    await new Promise<void>((resolve) => {
      stream.once('error', () => resolve());
      stream.end(() => resolve());
    });
  }

  #open(): RotatingFileStream | undefined {
    if (this.#stream !== undefined) return this.#stream;
    if (this.#closed || this.#now() < this.#reopenAt) return undefined;
    try {
      // What ran on this machine is the user's business only: the folder is the user's alone
      // when svc makes it, and a file left readable by an older svc or a copy is made private.
      mkdirSync(this.#options.dir, { recursive: true, mode: 0o700 });
      chmodSync(this.path, 0o600);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
        this.#reopenAt = this.#now() + REOPEN_AFTER_MS;
        this.#warn(`job log: cannot write ${this.path} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}); jobs are not logged until it works again (retried every minute)`, error);
        return undefined;
      }
    }
    const stream = createStream(JOB_LOG_FILE, {
      path: this.#options.dir,
      size: this.#options.size ?? DEFAULT_JOB_LOG_SIZE,
      rotate: this.#options.rotated ?? DEFAULT_JOB_LOG_ROTATED,
      // What ran on this machine is the user's business only.
      mode: 0o600,
    });
    // After 'error' the stream is closed for good (rotating-file-stream's rule): drop it and
    // open a new one later.
    stream.on('error', (error) => this.#failed(stream, error, true));
    // A failure the stream survives (it goes on writing): said, not acted on.
    stream.on('warning', (error) => this.#failed(stream, error, false));
    this.#stream = stream;
    return stream;
  }

  #failed(stream: RotatingFileStream, error: Error, fatal: boolean): void {
    if (fatal) {
      if (this.#stream === stream) this.#stream = undefined;
      this.#reopenAt = this.#now() + REOPEN_AFTER_MS;
      stream.destroy();
    }
    const cause = (error as NodeJS.ErrnoException).code ?? error.message;
    this.#warn(
      fatal
        ? `job log: cannot write ${this.path} (${cause}); jobs are not logged until it works again (retried every minute)`
        : `job log: ${this.path}: ${cause}`,
      error,
    );
  }

  #warn(message: string, error: unknown): void {
    if (this.#warned) return;
    this.#warned = true;
    this.#options.onWarning(message, error);
  }
}
