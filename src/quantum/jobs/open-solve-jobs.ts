import type { OffThread } from '../../shared/off-thread.ts';
import type { SolveService } from '../solve-service.ts';
import { BullJobQueue, type WorkerRecord } from './bullmq-job-queue.ts';
import { InProcessJobQueue } from './in-process-job-queue.ts';
import { PostgresSolveJobStore } from './postgres-solve-job-store.ts';
import { SqliteSolveJobStore, type SolveJobStore } from './solve-job-store.ts';
import { SolveJobs } from './solve-jobs.ts';

/**
 * Picks the job store and the queue the way the hosted store picks its database: SQLite in the
 * data dir and an in-process queue by default; PostgreSQL with a database URL; BullMQ with a
 * Redis URL. A gateway (`svc hosted`) and a worker (`svc worker`) open the same way, so they
 * meet on the same store and queue.
 */
export interface OpenSolveJobsOptions {
  service: SolveService;
  /** The SQLite file when there is no database URL. */
  sqlitePath: string;
  databaseUrl?: string | undefined;
  redisUrl?: string | undefined;
  redisKeyPrefix?: string | undefined;
  /** false: only queue jobs (a gateway with --no-local-solves); workers elsewhere run them. */
  runJobs?: boolean;
  /** A job's lock on Redis without renewal; a dead worker's job runs elsewhere after it (default 30 s). */
  lockDurationMs?: number;
  concurrency?: number;
  offThread?: OffThread;
}

export interface OpenedSolveJobs {
  jobs: SolveJobs;
  /** Where jobs wait: `in-process` or `bullmq`; and the store: `sqlite` or `postgres`. */
  queue: 'in-process' | 'bullmq';
  store: 'sqlite' | 'postgres';
  /** The live workers (processes running jobs) on a shared queue; [] on the in-process one. */
  workers(): Promise<WorkerRecord[]>;
  /** What `/api/v1/capacity` shows under `solve_jobs` (no host names or pids: the descriptor is public). */
  capacity(): Promise<Record<string, unknown>>;
  close(): Promise<void>;
}

export async function openSolveJobs(options: OpenSolveJobsOptions): Promise<OpenedSolveJobs> {
  const usePostgres = options.databaseUrl !== undefined && options.databaseUrl !== '';
  const store: SolveJobStore = usePostgres ? await PostgresSolveJobStore.open(options.databaseUrl!) : new SqliteSolveJobStore(options.sqlitePath);
  const bull = options.redisUrl === undefined || options.redisUrl === ''
    ? undefined
    : new BullJobQueue({ redisUrl: options.redisUrl, prefix: options.redisKeyPrefix, lockDurationMs: options.lockDurationMs });
  let jobs: SolveJobs;
  try {
    jobs = await SolveJobs.open({
      service: options.service, store, queue: bull ?? new InProcessJobQueue(), offThread: options.offThread,
      runJobs: options.runJobs, concurrency: options.concurrency,
    });
  } catch (error) {
    await bull?.close();
    await store.close();
    throw error;
  }
  return {
    jobs,
    queue: bull === undefined ? 'in-process' : 'bullmq',
    store: usePostgres ? 'postgres' : 'sqlite',
    workers: async () => (bull === undefined ? [] : bull.workers()),
    async capacity() {
      const workers = bull === undefined ? [] : await bull.workers().catch(() => []);
      return {
        queue: bull === undefined ? 'in-process' : 'bullmq',
        store: usePostgres ? 'postgres' : 'sqlite',
        local_solves: options.runJobs !== false,
        ...jobs.counts,
        retention_seconds: Math.round(jobs.retentionMs / 1000),
        workers: workers.map((w) => ({ id: w.id, concurrency: w.concurrency, running: w.running, started_at: Math.floor(w.started_at / 1000), seen_at: Math.floor(w.seen_at / 1000) })),
      };
    },
    async close() {
      await jobs.close();
      await store.close();
    },
  };
}
