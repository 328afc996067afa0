import { execFile, spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { ApiError, type ApiErrorOptions } from '../shared/api-error.ts';
import { documentTooComplex, documentUnreadable } from './extraction-errors.ts';
import { extractionLimitsFromEnv } from './extraction-limits.ts';
import type { DocumentFormat, ExtractedDocument } from './space-document.ts';

/**
 * Runs extractors in a separate process (extraction-child.ts) with a time, a memory and an
 * output limit. pdf.js, mammoth and the text parsers are third-party code fed hostile bytes: a
 * PDF stream can inflate to gigabytes of blank space, a markdown table of a few kilobytes can
 * ask for a billion cells, and a parser can loop. A worker thread's heap limit does not hold
 * buffers (pdf.js inflates into ArrayBuffers) nor native memory, and they would grow the
 * daemon's own RSS; a process has its own, bounded from outside, and can be killed.
 *
 * The memory bound (`memoryMb`):
 * - Linux: the process is started through `/bin/sh` with `ulimit -d` (RLIMIT_DATA, which since
 *   Linux 4.7 counts every private writable mapping: heap, ArrayBuffers, malloc arenas, thread
 *   stacks). Any user may lower their own limit, no root or cgroup needed. The kernel refuses
 *   the allocation past it: V8 then throws a RangeError (a buffer) or stops the process (its
 *   heap), and either is `document_too_complex`. RLIMIT_DATA also counts address space V8
 *   reserves at start and never makes resident (its 512 MiB code range), so the limit set is
 *   `memoryMb` + RESERVED_DATA_MB; what the process can make resident stays about `memoryMb`.
 * - Elsewhere (macOS, BSD): RLIMIT_DATA does not count mmap there, so while a task runs this
 *   side samples the process's RSS (`ps`) every RSS_SAMPLE_MS and kills it past `memoryMb`;
 *   Windows has only the V8 heap limit. Both also set V8's heap limit to `memoryMb`.
 *
 * One process, tasks in arrival order; the clock of a task starts when the process gets it,
 * not while it waits. A task past its time or its memory takes the process down with it and the
 * next task starts a fresh one. An idle process exits after `idleMs` (pdf.js's memory goes with
 * it) and never keeps the daemon alive. Starting one costs about as much as the worker thread
 * it replaced (bench/spaces-extract.ts, docs/BENCHMARKS.md).
 */

export interface ExtractionWorkerOptions {
  /** Memory the extraction process may use, MiB; default SVC_EXTRACTION_MEMORY_MB or 512. */
  memoryMb?: number;
  /** Most bytes of extracted text per document; default SVC_EXTRACTION_MAX_TEXT_MB or 64 MiB. */
  maxTextBytes?: number;
  /** Idle time after which the process exits; default 5 s. */
  idleMs?: number;
  /** Tasks allowed to run or wait; default 32 (then 503 `server_busy`). */
  maxPending?: number;
  /** The process's script; default extraction-child.ts (tests give a misbehaving one). */
  script?: URL;
}

/** What the extraction process sends back for a task. */
export type ExtractionReply =
  | { id: number; ok: true; value: ExtractedDocument }
  | { id: number; ok: false; apiError: ApiErrorOptions | null; detail: string };

/** What the extraction process is sent: a file's bytes, or (`text`) a text already decoded. */
export interface ExtractionTask {
  id: number;
  format: DocumentFormat;
  bytes: Uint8Array;
  text?: string;
  /** The request field errors name: `file` for an upload, `text` for a JSON body. */
  param: string | null;
  maxTextBytes: number;
  memoryMb: number;
}

interface Running {
  pending: Pending;
  timer: NodeJS.Timeout;
  sampler: NodeJS.Timeout | undefined;
}

interface Pending {
  task: ExtractionTask;
  timeoutMs: number;
  resolve: (value: ExtractedDocument) => void;
  reject: (error: unknown) => void;
}

/**
 * Address space Node and V8 make writable at start and never make resident (V8's 512 MiB code
 * range, 8 MiB stacks for its threads): measured 524-551 MiB (VmData less VmRSS) on Linux x64,
 * Node 24, idle and after a 300-page PDF. RLIMIT_DATA counts it, so it is added to the limit;
 * the rest (what can be resident) is then about `memoryMb` (file-backed pages, the binary, on top).
 */
const RESERVED_DATA_MB = 512;
const RSS_SAMPLE_MS = 100;
/** The end of the process's stderr kept to tell why it died. */
const STDERR_TAIL_BYTES = 4096;
/** The process stopped itself: V8's heap, or an allocation it could not make. */
const DIED_OF_MEMORY = /out of memory|Allocation failed|Cannot allocate memory|std::bad_alloc/i;

const FORMAT_NAMES: Record<DocumentFormat, string> = {
  text: 'text file', markdown: 'markdown file', html: 'HTML file', pdf: 'PDF', docx: 'Word document', csv: 'CSV file', json: 'JSON file',
};

export class ExtractionWorker {
  readonly memoryMb: number;
  readonly maxTextBytes: number;
  readonly idleMs: number;
  readonly maxPending: number;
  readonly #script: URL;
  readonly #queue: Pending[] = [];
  #running: Running | undefined;
  #child: ChildProcess | undefined;
  #stderr = '';
  #killedForMemory = false;
  #idleTimer: NodeJS.Timeout | undefined;
  #nextId = 1;

  constructor(options: ExtractionWorkerOptions = {}) {
    const limits = extractionLimitsFromEnv();
    this.memoryMb = options.memoryMb ?? limits.memoryMb;
    this.maxTextBytes = options.maxTextBytes ?? limits.maxTextBytes;
    this.idleMs = options.idleMs ?? 5_000;
    this.maxPending = options.maxPending ?? 32;
    this.#script = options.script ?? new URL('./extraction-child.ts', import.meta.url);
  }

  /** Whether an extraction process exists now. */
  get started(): boolean {
    return this.#child !== undefined;
  }

  /** The extraction process's id, while there is one. */
  get pid(): number | undefined {
    return this.#child?.pid;
  }

  /** Reads a file's bytes as `format`. */
  run(format: DocumentFormat, bytes: Uint8Array, timeoutMs: number): Promise<ExtractedDocument> {
    return this.#enqueue({ format, bytes, param: 'file' }, timeoutMs);
  }

  /** Reads text already decoded (a JSON body's `text`) as `format`; errors name `param`. */
  runText(format: DocumentFormat, text: string, timeoutMs: number, param: string | null = 'text'): Promise<ExtractedDocument> {
    return this.#enqueue({ format, bytes: new Uint8Array(0), text, param }, timeoutMs);
  }

  #enqueue(input: Pick<ExtractionTask, 'format' | 'bytes' | 'text' | 'param'>, timeoutMs: number): Promise<ExtractedDocument> {
    if (this.#queue.length + (this.#running === undefined ? 0 : 1) >= this.maxPending) {
      return Promise.reject(ApiError.busy('Too many documents are being read; retry shortly.', 1, 503, 'server_busy'));
    }
    return new Promise((resolve, reject) => {
      const task: ExtractionTask = { id: this.#nextId++, ...input, maxTextBytes: this.maxTextBytes, memoryMb: this.memoryMb };
      this.#queue.push({ task, timeoutMs, resolve, reject });
      this.#pump();
    });
  }

  /** Stops the process; tasks still waiting fail with 503. */
  async close(): Promise<void> {
    clearTimeout(this.#idleTimer);
    const closing = ApiError.busy('The daemon is shutting down.', 1, 503, 'server_shutting_down');
    for (const pending of this.#queue.splice(0)) pending.reject(closing);
    if (this.#running !== undefined) {
      this.#stopClocks(this.#running);
      this.#running.pending.reject(closing);
      this.#running = undefined;
    }
    await this.#discardChild();
  }

  #pump(): void {
    if (this.#running !== undefined) return;
    const pending = this.#queue.shift();
    if (pending === undefined) {
      this.#setHeld(false);
      this.#scheduleIdleExit();
      return;
    }
    clearTimeout(this.#idleTimer);
    const { task, timeoutMs } = pending;
    const timer = setTimeout(() => {
      const seconds = Math.round(timeoutMs / 100) / 10;
      this.#fail(task.id, documentUnreadable(`Reading the ${FORMAT_NAMES[task.format]} took longer than ${seconds} s; it was stopped.`, undefined, task.param));
    }, timeoutMs);
    this.#running = { pending, timer, sampler: undefined };
    try {
      const child = this.#spawn();
      this.#setHeld(true);
      this.#running.sampler = this.#sampleRss(child);
      child.send(task);
    } catch (error) {
      this.#fail(task.id, ApiError.internal(error));
    }
  }

  #stopClocks(running: Running): void {
    clearTimeout(running.timer);
    clearInterval(running.sampler);
  }

  /** Ends the running task `id` with `error`; its process may be mid-parse, so it goes too. */
  #fail(id: number, error: unknown): void {
    const running = this.#running;
    if (running === undefined || running.pending.task.id !== id) return;
    this.#stopClocks(running);
    this.#running = undefined;
    running.pending.reject(error);
    void this.#discardChild().then(() => this.#pump());
  }

  async #discardChild(): Promise<void> {
    const child = this.#child;
    if (child === undefined) return;
    // Held until it has exited, so that close() (or a test) does not see the event loop empty first.
    this.#setHeld(true);
    this.#child = undefined;
    child.removeAllListeners();
    child.on('error', () => undefined);
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  }

  /** A held process keeps the daemon's event loop alive (a task runs); an idle one does not. */
  #setHeld(held: boolean): void {
    const child = this.#child;
    if (child === undefined) return;
    const handles = [child, child.channel, child.stderr] as ({ ref?: () => void; unref?: () => void } | null | undefined)[];
    for (const handle of handles) {
      if (held) handle?.ref?.();
      else handle?.unref?.();
    }
  }

  #scheduleIdleExit(): void {
    clearTimeout(this.#idleTimer);
    if (this.#child === undefined) return;
    this.#idleTimer = setTimeout(() => {
      if (this.#running === undefined) void this.#discardChild();
    }, this.idleMs);
    this.#idleTimer.unref();
  }

  /** Where RLIMIT_DATA does not bound the process (see above): its RSS, sampled while a task runs. */
  #sampleRss(child: ChildProcess): NodeJS.Timeout | undefined {
    if (process.platform === 'linux' || process.platform === 'win32' || child.pid === undefined) return undefined;
    const pid = String(child.pid);
    return setInterval(() => {
      execFile('ps', ['-o', 'rss=', '-p', pid], (error, stdout) => {
        if (error !== null || this.#child !== child) return;
        const rssKib = Number(stdout.trim());
        if (Number.isFinite(rssKib) && rssKib > this.memoryMb * 1024) {
          this.#killedForMemory = true;
          child.kill('SIGKILL');
        }
      });
    }, RSS_SAMPLE_MS);
  }

  #spawn(): ChildProcess {
    if (this.#child !== undefined) return this.#child;
    const nodeArgs = [`--max-old-space-size=${this.memoryMb}`, fileURLToPath(this.#script)];
    const options: SpawnOptions = { stdio: ['ignore', 'ignore', 'pipe', 'ipc'], serialization: 'advanced' };
    // `ulimit -d` takes KiB. A shell that cannot set it stops: extraction never runs unbounded.
    const bounded = `ulimit -c 0 2>/dev/null; ulimit -d ${(this.memoryMb + RESERVED_DATA_MB) * 1024} || exit 97; exec "$0" "$@"`;
    const child = process.platform === 'linux'
      ? spawn('/bin/sh', ['-c', bounded, process.execPath, ...nodeArgs], options)
      : spawn(process.execPath, nodeArgs, options);
    this.#stderr = '';
    this.#killedForMemory = false;
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (chunk: string) => {
      this.#stderr = (this.#stderr + chunk).slice(-STDERR_TAIL_BYTES);
    });
    child.on('message', (reply: ExtractionReply) => {
      const running = this.#running;
      if (this.#child !== child || running === undefined || running.pending.task.id !== reply.id) return;
      this.#stopClocks(running);
      this.#running = undefined;
      if (reply.ok) running.pending.resolve(reply.value);
      else running.pending.reject(reply.apiError !== null ? new ApiError(reply.apiError) : ApiError.internal(new Error(reply.detail)));
      this.#pump();
    });
    const died = (error: unknown) => {
      if (this.#child !== child) return;
      const running = this.#running;
      if (running === undefined) {
        this.#child = undefined;
        return;
      }
      const { task } = running.pending;
      const format = FORMAT_NAMES[task.format];
      // SIGKILL that this side did not send for a timeout: the sampler, or the system's OOM killer.
      const outOfMemory = this.#killedForMemory || child.signalCode === 'SIGKILL' || DIED_OF_MEMORY.test(this.#stderr);
      this.#fail(
        task.id,
        outOfMemory
          ? documentTooComplex(`Reading the ${format} needs more than the ${this.memoryMb} MiB of memory extraction may use; it was stopped.`, task.param)
          : documentUnreadable(`The ${format} cannot be read: its parser failed (${error instanceof Error ? error.message : String(error)}).`, error, task.param),
      );
    };
    child.on('error', died);
    // 'close', not 'exit': by then its stderr (which says why it died) has been read to the end.
    child.on('close', (code, signal) => died(new Error(`the extraction process exited with ${signal ?? `code ${code}`}`)));
    this.#child = child;
    return child;
  }
}

let shared: ExtractionWorker | undefined;

/** The process's extraction worker (created on first use). */
export function sharedExtractionWorker(): ExtractionWorker {
  shared ??= new ExtractionWorker();
  return shared;
}
