import { execFile, spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { ApiError } from '../shared/api-error.ts';
import { taskReplyValue, type TaskReply } from '../shared/task-reply.ts';
import { WorkerQueue, type QueueWorker, type QueueWorkerEvents } from '../shared/worker-queue.ts';
import { documentTooComplex, documentUnreadable } from './extraction-errors.ts';
import { extractionLimitsFromEnv } from './extraction-limits.ts';
import type { DocumentFormat, ExtractedDocument } from './space-document.ts';
import { siblingModule } from '../shared/sibling-module.ts';

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
 * One process, tasks in arrival order (a WorkerQueue of size 1, shared/worker-queue.ts); the
 * clock of a task starts when the process gets it, not while it waits. A task past its time or
 * its memory takes the process down with it and the next task starts a fresh one. An idle
 * process exits after `idleMs` (pdf.js's memory goes with it) and never keeps the daemon alive.
 * Starting one costs about as much as the worker thread it replaced (bench/spaces-extract.ts,
 * docs/BENCHMARKS.md).
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
export type ExtractionReply = TaskReply<ExtractedDocument>;

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

/** A task as it waits: what to read; the limits join it when it is sent. */
type ExtractionInput = Pick<ExtractionTask, 'format' | 'bytes' | 'text' | 'param'>;

/** Why the extraction process died, as the queue is told: whether of memory decides the answer. */
interface ExtractionDeath {
  error: unknown;
  outOfMemory: boolean;
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
  readonly #queue: WorkerQueue<ExtractionInput, ExtractionReply, ExtractedDocument, ExtractionProcess>;

  constructor(options: ExtractionWorkerOptions = {}) {
    const limits = extractionLimitsFromEnv();
    this.memoryMb = options.memoryMb ?? limits.memoryMb;
    this.maxTextBytes = options.maxTextBytes ?? limits.maxTextBytes;
    this.idleMs = options.idleMs ?? 5_000;
    this.maxPending = options.maxPending ?? 32;
    const script = options.script ?? siblingModule('./extraction-child', import.meta.url);
    this.#queue = new WorkerQueue({
      maxPending: this.maxPending,
      idleMs: this.idleMs,
      start: (events) => new ExtractionProcess(script, this.memoryMb, events),
      message: (input, id) => ({ message: { id, ...input, maxTextBytes: this.maxTextBytes, memoryMb: this.memoryMb } satisfies ExtractionTask }),
      settle: (reply) => taskReplyValue(reply),
      errors: {
        full: () => ApiError.busy('Too many documents are being read; retry shortly.', 1, 503, 'server_busy'),
        closed: () => ApiError.busy('The daemon is shutting down.', 1, 503, 'server_shutting_down'),
        timedOut: (task, timeoutMs) => {
          const seconds = Math.round(timeoutMs / 100) / 10;
          return documentUnreadable(`Reading the ${FORMAT_NAMES[task.format]} took longer than ${seconds} s; it was stopped.`, undefined, task.param);
        },
        died: (cause, task) => {
          const { error, outOfMemory } = cause as ExtractionDeath;
          const format = FORMAT_NAMES[task.format];
          return outOfMemory
            ? documentTooComplex(`Reading the ${format} needs more than the ${this.memoryMb} MiB of memory extraction may use; it was stopped.`, task.param)
            : documentUnreadable(`The ${format} cannot be read: its parser failed (${error instanceof Error ? error.message : String(error)}).`, error, task.param);
        },
        unsent: (cause) => ApiError.internal(cause),
      },
    });
  }

  /** Whether an extraction process exists now. */
  get started(): boolean {
    return this.#queue.workers.length > 0;
  }

  /** The extraction process's id, while there is one. */
  get pid(): number | undefined {
    return this.#queue.workers[0]?.pid;
  }

  /** Reads a file's bytes as `format`. */
  run(format: DocumentFormat, bytes: Uint8Array, timeoutMs: number): Promise<ExtractedDocument> {
    return this.#queue.run({ format, bytes, param: 'file' }, timeoutMs);
  }

  /** Reads text already decoded (a JSON body's `text`) as `format`; errors name `param`. */
  runText(format: DocumentFormat, text: string, timeoutMs: number, param: string | null = 'text'): Promise<ExtractedDocument> {
    return this.#queue.run({ format, bytes: new Uint8Array(0), text, param }, timeoutMs);
  }

  /**
   * Stops the process; tasks running or waiting fail with 503. A later task starts a new one:
   * the shared worker outlives the spaces runtime that closes it (sharedExtractionWorker).
   */
  close(): Promise<void> {
    return this.#queue.stop();
  }
}

/**
 * One extraction process, bounded as described above, as the queue drives it. It tells the
 * queue why it died: of memory (the sampler killed it, the kernel's OOM killer did, or its
 * stderr says an allocation failed) or otherwise.
 */
class ExtractionProcess implements QueueWorker {
  readonly #child: ChildProcess;
  readonly #memoryMb: number;
  /** The end of its stderr, which says why it died. */
  #stderr = '';
  #killedForMemory = false;
  #sampler: NodeJS.Timeout | undefined;
  #stopped = false;

  constructor(script: URL, memoryMb: number, events: QueueWorkerEvents<ExtractionReply>) {
    this.#memoryMb = memoryMb;
    const nodeArgs = [`--max-old-space-size=${memoryMb}`, fileURLToPath(script)];
    const options: SpawnOptions = { stdio: ['ignore', 'ignore', 'pipe', 'ipc'], serialization: 'advanced' };
    // `ulimit -d` takes KiB. A shell that cannot set it stops: extraction never runs unbounded.
    const bounded = `ulimit -c 0 2>/dev/null; ulimit -d ${(memoryMb + RESERVED_DATA_MB) * 1024} || exit 97; exec "$0" "$@"`;
    const child = process.platform === 'linux'
      ? spawn('/bin/sh', ['-c', bounded, process.execPath, ...nodeArgs], options)
      : spawn(process.execPath, nodeArgs, options);
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (chunk: string) => {
      this.#stderr = (this.#stderr + chunk).slice(-STDERR_TAIL_BYTES);
    });
    child.on('message', (reply: ExtractionReply) => events.reply(reply));
    const died = (error: unknown) => {
      clearInterval(this.#sampler);
      // SIGKILL that the queue did not send for a timeout: the sampler, or the system's OOM killer.
      const outOfMemory = this.#killedForMemory || child.signalCode === 'SIGKILL' || DIED_OF_MEMORY.test(this.#stderr);
      events.died({ error, outOfMemory } satisfies ExtractionDeath);
    };
    child.on('error', died);
    // 'close', not 'exit': by then its stderr (which says why it died) has been read to the end.
    child.on('close', (code, signal) => died(new Error(`the extraction process exited with ${signal ?? `code ${code}`}`)));
    this.#child = child;
  }

  get pid(): number | undefined {
    return this.#child.pid;
  }

  post(message: unknown): void {
    this.#child.send(message as ExtractionTask);
  }

  /** A held process keeps the daemon's event loop alive (a task runs) and its RSS is watched; an idle one, neither. */
  hold(held: boolean): void {
    this.#ref(held);
    if (held) {
      this.#sampler ??= this.#sampleRss();
    } else {
      clearInterval(this.#sampler);
      this.#sampler = undefined;
    }
  }

  async stop(): Promise<void> {
    const child = this.#child;
    this.#stopped = true;
    clearInterval(this.#sampler);
    // Held until it has exited, so that close() (or a test) does not see the event loop empty first.
    this.#ref(true);
    child.removeAllListeners();
    child.on('error', () => undefined);
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  }

  #ref(held: boolean): void {
    const child = this.#child;
    const handles = [child, child.channel, child.stderr] as ({ ref?: () => void; unref?: () => void } | null | undefined)[];
    for (const handle of handles) {
      if (held) handle?.ref?.();
      else handle?.unref?.();
    }
  }

  /** Where RLIMIT_DATA does not bound the process (see above): its RSS, sampled while it is held. */
  #sampleRss(): NodeJS.Timeout | undefined {
    const child = this.#child;
    if (process.platform === 'linux' || process.platform === 'win32' || child.pid === undefined) return undefined;
    const pid = String(child.pid);
    return setInterval(() => {
      execFile('ps', ['-o', 'rss=', '-p', pid], (error, stdout) => {
        if (error !== null || this.#stopped) return;
        const rssKib = Number(stdout.trim());
        if (Number.isFinite(rssKib) && rssKib > this.#memoryMb * 1024) {
          this.#killedForMemory = true;
          child.kill('SIGKILL');
        }
      });
    }, RSS_SAMPLE_MS);
  }
}

let shared: ExtractionWorker | undefined;

/** The process's extraction worker (created on first use). */
export function sharedExtractionWorker(): ExtractionWorker {
  shared ??= new ExtractionWorker();
  return shared;
}
