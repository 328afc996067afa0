import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { preparePrivateDatabase } from '../../shared/private-files.ts';
import { migrateSqliteStore, StatementCache, transaction } from '../../shared/sqlite-store.ts';
import type { StoreMigrationStep } from '../../shared/store-version.ts';

/**
 * Where solve jobs live between submission and the end of their retention: the request, its
 * status, and the answer (or error) once it ran. Every transition is a conditional update, so a
 * job that runs twice (at-least-once delivery: a worker died mid-run, or a replay) records
 * exactly one outcome: the first `finish` wins and later ones change nothing.
 *
 * The embedded default is SQLite in the data dir (`<data-dir>/solve-jobs/solve-jobs.db`); the
 * interface is async so that a shared store (PostgreSQL) can stand behind it for several
 * replicas.
 */
export type SolveJobStatus = 'queued' | 'running' | 'completed' | 'failed' | 'cancelled';

export const TERMINAL_STATUSES: ReadonlySet<SolveJobStatus> = new Set(['completed', 'failed', 'cancelled']);

export interface SolveJobRecord {
  id: string;
  /** Who may see it: an account id on the hosted tier, '' on the local daemon. */
  owner: string;
  client_job_id: string | null;
  /** The request body as JSON text (without `client_job_id`), run as `POST /api/solve` would. */
  body: string;
  solver: string;
  substrate: string;
  /** Problems in the request (1 for a single solve). */
  problems: number;
  priority: number;
  status: SolveJobStatus;
  /** Times a worker started it (more than 1 after a worker died mid-run). */
  attempts: number;
  created_at: number;
  started_at: number | null;
  finished_at: number | null;
  /** When a finished job is forgotten (ms since the epoch); null while it is unfinished. */
  expires_at: number | null;
  /** The solve or batch response, as JSON text, once completed. */
  result: string | null;
  /** The error's options (ApiErrorOptions) as JSON text, once failed or cancelled. */
  error: string | null;
}

export interface SolveJobStore {
  /** Stores a new job; with a `client_job_id` the owner already used, nothing is stored and that job is returned instead. */
  insert(job: SolveJobRecord): Promise<{ job: SolveJobRecord; created: boolean }>;
  get(id: string): Promise<SolveJobRecord | undefined>;
  /** queued (or running again, after a lost worker) → running; false when it is already finished. */
  start(id: string, now: number): Promise<boolean>;
  /** The outcome, once: false when another run (or a cancel) already finished it. */
  finish(id: string, outcome: { status: 'completed' | 'failed' | 'cancelled'; result?: string; error?: string }, now: number, expiresAt: number): Promise<boolean>;
  /** Jobs queued or running, oldest first: what a restarted process takes up again. */
  unfinished(): Promise<SolveJobRecord[]>;
  /** Forgets finished jobs whose retention has ended; the number forgotten. */
  deleteExpired(now: number): Promise<number>;
  close(): Promise<void>;
}

const SCHEMA = `
CREATE TABLE solve_jobs (
  id TEXT PRIMARY KEY,
  owner TEXT NOT NULL,
  client_job_id TEXT,
  body TEXT NOT NULL,
  solver TEXT NOT NULL,
  substrate TEXT NOT NULL,
  problems INTEGER NOT NULL,
  priority INTEGER NOT NULL,
  status TEXT NOT NULL,
  attempts INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  started_at INTEGER,
  finished_at INTEGER,
  expires_at INTEGER,
  result TEXT,
  error TEXT
);
CREATE UNIQUE INDEX solve_jobs_client ON solve_jobs(owner, client_job_id) WHERE client_job_id IS NOT NULL;
CREATE INDEX solve_jobs_unfinished ON solve_jobs(status, created_at);
CREATE INDEX solve_jobs_expiry ON solve_jobs(expires_at) WHERE expires_at IS NOT NULL;
`;

/** One step per version (PRAGMA user_version); a new schema is one step appended, never an edit. */
function steps(db: DatabaseSync): StoreMigrationStep[] {
  return [() => db.exec(SCHEMA)];
}

/** The columns every job query reads, in both stores (SQLite here, PostgreSQL beside). */
export const COLUMNS = 'id, owner, client_job_id, body, solver, substrate, problems, priority, status, attempts, created_at, started_at, finished_at, expires_at, result, error';

/** A row of either store as a record (PostgreSQL gives BIGINT columns as strings, SQLite as numbers). */
export function record(row: Record<string, unknown> | undefined): SolveJobRecord | undefined {
  if (row === undefined) return undefined;
  const numberOrNull = (v: unknown) => (v === null ? null : Number(v));
  return {
    id: String(row.id), owner: String(row.owner), client_job_id: row.client_job_id === null ? null : String(row.client_job_id),
    body: String(row.body), solver: String(row.solver), substrate: String(row.substrate), problems: Number(row.problems),
    priority: Number(row.priority), status: String(row.status) as SolveJobStatus, attempts: Number(row.attempts),
    created_at: Number(row.created_at), started_at: numberOrNull(row.started_at), finished_at: numberOrNull(row.finished_at),
    expires_at: numberOrNull(row.expires_at), result: row.result === null ? null : String(row.result), error: row.error === null ? null : String(row.error),
  };
}

/** The embedded store: one SQLite file (or `:memory:`), WAL, written by this process only. */
export class SqliteSolveJobStore implements SolveJobStore {
  readonly #db: DatabaseSync;
  readonly #statements: StatementCache;

  /** Where the daemon keeps it in a data dir. */
  static pathIn(dataDir: string): string {
    return join(dataDir, 'solve-jobs', 'solve-jobs.db');
  }

  constructor(path: string) {
    // The jobs' bodies and answers are the user's: the database and its -wal/-shm are 0600 in a 0700 folder.
    if (path !== ':memory:') preparePrivateDatabase(path);
    this.#db = new DatabaseSync(path);
    this.#db.exec('PRAGMA busy_timeout = 5000');
    migrateSqliteStore(this.#db, { store: 'solve jobs store', file: path }, steps(this.#db));
    if (path !== ':memory:') this.#db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL');
    this.#statements = new StatementCache(this.#db);
  }

  #run(sql: string, ...values: (string | number | null)[]) {
    return this.#statements.prepare(sql).run(...values);
  }

  #row(sql: string, ...values: (string | number | null)[]): SolveJobRecord | undefined {
    return record(this.#statements.prepare(sql).get(...values) as Record<string, unknown> | undefined);
  }

  async insert(job: SolveJobRecord): Promise<{ job: SolveJobRecord; created: boolean }> {
    return transaction(this.#db, () => {
      if (job.client_job_id !== null) {
        const existing = this.#row(`SELECT ${COLUMNS} FROM solve_jobs WHERE owner = ? AND client_job_id = ?`, job.owner, job.client_job_id);
        if (existing !== undefined) return { job: existing, created: false };
      }
      this.#run(
        `INSERT INTO solve_jobs (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        job.id, job.owner, job.client_job_id, job.body, job.solver, job.substrate, job.problems, job.priority, job.status, job.attempts,
        job.created_at, job.started_at, job.finished_at, job.expires_at, job.result, job.error,
      );
      return { job, created: true };
    });
  }

  async get(id: string): Promise<SolveJobRecord | undefined> {
    return this.#row(`SELECT ${COLUMNS} FROM solve_jobs WHERE id = ?`, id);
  }

  async start(id: string, now: number): Promise<boolean> {
    const { changes } = this.#run(
      `UPDATE solve_jobs SET status = 'running', attempts = attempts + 1, started_at = ? WHERE id = ? AND status IN ('queued', 'running')`,
      now, id,
    );
    return Number(changes) === 1;
  }

  async finish(id: string, outcome: { status: 'completed' | 'failed' | 'cancelled'; result?: string; error?: string }, now: number, expiresAt: number): Promise<boolean> {
    const { changes } = this.#run(
      `UPDATE solve_jobs SET status = ?, result = ?, error = ?, finished_at = ?, expires_at = ? WHERE id = ? AND status IN ('queued', 'running')`,
      outcome.status, outcome.result ?? null, outcome.error ?? null, now, expiresAt, id,
    );
    return Number(changes) === 1;
  }

  async unfinished(): Promise<SolveJobRecord[]> {
    const rows = this.#statements.prepare(`SELECT ${COLUMNS} FROM solve_jobs WHERE status IN ('queued', 'running') ORDER BY created_at, id`).all() as Record<string, unknown>[];
    return rows.map((row) => record(row)!);
  }

  async deleteExpired(now: number): Promise<number> {
    return Number(this.#run('DELETE FROM solve_jobs WHERE expires_at IS NOT NULL AND expires_at <= ?', now).changes);
  }

  async close(): Promise<void> {
    this.#statements.clear();
    if (this.#db.isOpen) this.#db.close();
  }
}
