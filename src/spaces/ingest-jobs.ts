import { ApiError } from '../shared/api-error.ts';
import { newId } from '../shared/new-id.ts';

/**
 * Uploads are ingested by a queue of jobs, one at a time: extraction and embedding are CPU work
 * on the daemon's thread, and running two at once on a small machine only makes both slower and
 * the daemon less responsive. A job reports per-file results and progress; finished jobs are
 * kept for an hour (at most MAX_KEPT), which is how long a client has to read the outcome.
 */
export type JobStatus = 'queued' | 'running' | 'completed' | 'failed';
export type FileStatus = 'queued' | 'running' | 'added' | 'unchanged' | 'replaced' | 'failed';

export interface JobFile {
  filename: string | null;
  /** Bytes of extracted text (what is embedded and stored), not of the uploaded file. */
  text_bytes: number;
  status: FileStatus;
  document_id: string | null;
  error: { code: string; message: string } | null;
}

export interface IngestJob {
  object: 'space.ingest_job';
  id: string;
  space: string;
  status: JobStatus;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  progress: { files_total: number; files_done: number; text_bytes_total: number; text_bytes_done: number };
  files: JobFile[];
}

/** One file's outcome: its document and whether it was new, or why it failed. */
export type FileOutcome = { documentId: string; status: Extract<FileStatus, 'added' | 'unchanged' | 'replaced'> } | { error: unknown };

/**
 * What a job does: ingests its files, in whatever groups it likes (several files to a
 * transaction is what makes bulk ingest fast), and reports each file's outcome once it is
 * settled. A file it never reports fails with the error it throws.
 */
export type JobWork = (report: (index: number, outcome: FileOutcome) => void) => Promise<void>;

const KEEP_MS = 60 * 60 * 1000;
const MAX_KEPT = 500;

interface JobEntry {
  job: IngestJob;
  /**
   * Null once the job has run: the work function closes over the upload (its files' bytes, their
   * extracted text and chunks), and a finished job is kept an hour for its record alone. Holding
   * the closure kept every upload of that hour resident: 2.2 GB more at a million chunks.
   */
  work: JobWork | null;
  done: Promise<void>;
  resolve: () => void;
  bytes: number;
}

export class IngestJobs {
  readonly #jobs = new Map<string, JobEntry>();
  readonly #queue: string[] = [];
  readonly #maxQueuedBytes: number;
  #queuedBytes = 0;
  #running = false;
  #closed = false;

  constructor(options: { maxQueuedBytes: number }) {
    this.#maxQueuedBytes = options.maxQueuedBytes;
  }

  /** Queues a job over `files`; 503 when the queue already holds too many bytes (retry later). */
  submit(space: string, files: readonly { filename: string | null; textBytes: number }[], work: JobWork): IngestJob {
    if (this.#closed) throw ApiError.busy('The daemon is shutting down; the upload was not queued.', 1, 503, 'server_shutting_down');
    const bytes = files.reduce((n, f) => n + f.textBytes, 0);
    if (this.#queuedBytes + bytes > this.#maxQueuedBytes && this.#queue.length > 0) {
      throw ApiError.busy('Too many uploads are waiting to be ingested; retry when the queued jobs have finished.', 5, 503, 'ingest_queue_full');
    }
    this.#expire();
    const job: IngestJob = {
      object: 'space.ingest_job',
      id: newId('job_'),
      space,
      status: 'queued',
      created_at: new Date().toISOString(),
      started_at: null,
      finished_at: null,
      progress: { files_total: files.length, files_done: 0, text_bytes_total: bytes, text_bytes_done: 0 },
      files: files.map((f) => ({ filename: f.filename, text_bytes: f.textBytes, status: 'queued', document_id: null, error: null })),
    };
    let resolve!: () => void;
    const done = new Promise<void>((r) => (resolve = r));
    this.#jobs.set(job.id, { job, work, done, resolve, bytes });
    this.#queuedBytes += bytes;
    this.#queue.push(job.id);
    void this.#drain();
    return job;
  }

  /** The job, or 404 `job_not_found` (also for another space's job id). */
  get(space: string, id: string): IngestJob {
    const entry = this.#jobs.get(id);
    if (entry === undefined || entry.job.space.toLowerCase() !== space.toLowerCase()) {
      throw ApiError.notFound(`No ingest job '${id}' in space '${space}' (finished jobs are kept for an hour).`, 'job_not_found');
    }
    return entry.job;
  }

  /** Resolves when the job has finished (completed or failed). */
  async wait(id: string): Promise<IngestJob | undefined> {
    const entry = this.#jobs.get(id);
    if (entry === undefined) return undefined;
    await entry.done;
    return entry.job;
  }

  /** Stops taking jobs and waits for the running one; queued jobs fail with `server_shutting_down`. */
  async close(): Promise<void> {
    this.#closed = true;
    for (const id of this.#queue.splice(0)) {
      const entry = this.#jobs.get(id);
      if (entry === undefined) continue;
      for (const file of entry.job.files) file.error = { code: 'server_shutting_down', message: 'The daemon shut down before this file was ingested.' };
      for (const file of entry.job.files) file.status = 'failed';
      this.#finish(entry, 'failed');
    }
    await Promise.all([...this.#jobs.values()].map((e) => e.done));
  }

  async #drain(): Promise<void> {
    if (this.#running) return;
    this.#running = true;
    try {
      for (let id = this.#queue.shift(); id !== undefined; id = this.#queue.shift()) {
        const entry = this.#jobs.get(id);
        if (entry !== undefined) await this.#run(entry);
      }
    } finally {
      this.#running = false;
    }
  }

  async #run(entry: JobEntry): Promise<void> {
    const { job } = entry;
    job.status = 'running';
    job.started_at = new Date().toISOString();
    for (const file of job.files) file.status = 'running';
    const settle = (index: number, outcome: FileOutcome) => {
      const file = job.files[index];
      if (file === undefined || file.status !== 'running') return;
      if ('error' in outcome) {
        file.status = 'failed';
        file.error = shownError(outcome.error);
      } else {
        file.status = outcome.status;
        file.document_id = outcome.documentId;
      }
      job.progress.files_done++;
      job.progress.text_bytes_done += file.text_bytes;
    };
    try {
      // Never null here: only queued jobs run, and close() takes the rest out of the queue.
      await entry.work?.(settle);
    } catch (error) {
      for (const index of job.files.keys()) settle(index, { error });
    }
    for (const index of job.files.keys()) settle(index, { error: new Error('the job did not report this file') });
    this.#finish(entry, job.files.every((f) => f.status === 'failed') ? 'failed' : 'completed');
  }

  #finish(entry: JobEntry, status: JobStatus): void {
    entry.work = null;
    entry.job.status = status;
    entry.job.finished_at = new Date().toISOString();
    this.#queuedBytes -= entry.bytes;
    entry.bytes = 0;
    entry.resolve();
  }

  #expire(): void {
    const cutoff = Date.now() - KEEP_MS;
    const finished = [...this.#jobs.values()].filter((e) => e.job.finished_at !== null);
    for (const [i, e] of finished.entries()) {
      if (Date.parse(e.job.finished_at!) < cutoff || finished.length - i > MAX_KEPT) this.#jobs.delete(e.job.id);
    }
  }
}

/** Only deliberate errors are shown; anything else is logged by the caller's work function. */
function shownError(error: unknown): { code: string; message: string } {
  return error instanceof ApiError && error.status < 500
    ? { code: error.code, message: error.message }
    : { code: 'ingest_failed', message: 'This file could not be ingested; the daemon log says why.' };
}
