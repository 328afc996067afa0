import pg from 'pg';
import { checkStoreVersion } from '../../shared/store-version.ts';
import { COLUMNS, record, type SolveJobRecord, type SolveJobStore } from './solve-job-store.ts';

/**
 * The solve-job store in PostgreSQL, for several replicas (gateways and `svc worker`s) that share
 * jobs: the same table and the same conditional updates as the SQLite store, so a job still
 * records one outcome whichever process finishes it first. Its schema version is its own
 * (`solve_jobs_version`), apart from the hosted store's migrations.
 */
const SCHEMA = `
CREATE TABLE solve_jobs (
  id text PRIMARY KEY,
  owner text NOT NULL,
  client_job_id text,
  body text NOT NULL,
  solver text NOT NULL,
  substrate text NOT NULL,
  problems integer NOT NULL,
  priority integer NOT NULL,
  status text NOT NULL,
  attempts integer NOT NULL,
  created_at bigint NOT NULL,
  started_at bigint,
  finished_at bigint,
  expires_at bigint,
  result text,
  error text
);
CREATE UNIQUE INDEX solve_jobs_client ON solve_jobs(owner, client_job_id) WHERE client_job_id IS NOT NULL;
CREATE INDEX solve_jobs_unfinished ON solve_jobs(status, created_at);
CREATE INDEX solve_jobs_expiry ON solve_jobs(expires_at) WHERE expires_at IS NOT NULL;
`;

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

export class PostgresSolveJobStore implements SolveJobStore {
  readonly #pool: pg.Pool;

  private constructor(pool: pg.Pool) {
    this.#pool = pool;
  }

  /** Connects and brings the table up to date (one transaction under an advisory lock, so replicas starting together do not race). */
  static async open(url: string, options: { schema?: string; poolSize?: number } = {}): Promise<PostgresSolveJobStore> {
    const { schema } = options;
    if (schema !== undefined && !SCHEMA_NAME.test(schema)) throw new TypeError('the solve jobs schema must be a lower-case identifier');
    const pool = new pg.Pool({ connectionString: url, max: options.poolSize ?? 4, ...(schema === undefined ? {} : { options: `-c search_path=${schema}` }) });
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      await client.query(`SELECT pg_advisory_xact_lock(hashtext('svc_solve_jobs_schema'))`);
      if (schema !== undefined) await client.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
      await client.query('CREATE TABLE IF NOT EXISTS solve_jobs_version (version integer NOT NULL)');
      const found = (await client.query<{ version: number }>('SELECT version FROM solve_jobs_version')).rows[0]?.version ?? 0;
      const steps: (() => Promise<unknown>)[] = [() => client.query(SCHEMA)];
      const where = { store: 'solve jobs store', file: `${new URL(url).host}${schema === undefined ? '' : `/${schema}`}` };
      checkStoreVersion(where, found, steps.length);
      for (let version = found; version < steps.length; version++) await steps[version]!();
      if (found === 0) await client.query('INSERT INTO solve_jobs_version (version) VALUES ($1)', [steps.length]);
      else if (found < steps.length) await client.query('UPDATE solve_jobs_version SET version = $1', [steps.length]);
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      client.release();
      await pool.end();
      throw error;
    }
    client.release();
    return new PostgresSolveJobStore(pool);
  }

  async #row(sql: string, values: unknown[]): Promise<SolveJobRecord | undefined> {
    return record((await this.#pool.query(sql, values)).rows[0] as Record<string, unknown> | undefined);
  }

  async insert(job: SolveJobRecord): Promise<{ job: SolveJobRecord; created: boolean }> {
    // ON CONFLICT on the (owner, client_job_id) index: two replicas given the same client_job_id at once store one job.
    const inserted = await this.#row(
      `INSERT INTO solve_jobs (${COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)
       ON CONFLICT (owner, client_job_id) WHERE client_job_id IS NOT NULL DO NOTHING RETURNING ${COLUMNS}`,
      [job.id, job.owner, job.client_job_id, job.body, job.solver, job.substrate, job.problems, job.priority, job.status, job.attempts,
        job.created_at, job.started_at, job.finished_at, job.expires_at, job.result, job.error],
    );
    if (inserted !== undefined) return { job: inserted, created: true };
    const existing = await this.#row(`SELECT ${COLUMNS} FROM solve_jobs WHERE owner = $1 AND client_job_id = $2`, [job.owner, job.client_job_id]);
    return { job: existing!, created: false };
  }

  get(id: string): Promise<SolveJobRecord | undefined> {
    return this.#row(`SELECT ${COLUMNS} FROM solve_jobs WHERE id = $1`, [id]);
  }

  async start(id: string, now: number): Promise<boolean> {
    const { rowCount } = await this.#pool.query(
      `UPDATE solve_jobs SET status = 'running', attempts = attempts + 1, started_at = $1 WHERE id = $2 AND status IN ('queued', 'running')`,
      [now, id],
    );
    return rowCount === 1;
  }

  async finish(id: string, outcome: { status: 'completed' | 'failed' | 'cancelled'; result?: string; error?: string }, now: number, expiresAt: number): Promise<boolean> {
    const { rowCount } = await this.#pool.query(
      `UPDATE solve_jobs SET status = $1, result = $2, error = $3, finished_at = $4, expires_at = $5 WHERE id = $6 AND status IN ('queued', 'running')`,
      [outcome.status, outcome.result ?? null, outcome.error ?? null, now, expiresAt, id],
    );
    return rowCount === 1;
  }

  async unfinished(): Promise<SolveJobRecord[]> {
    const { rows } = await this.#pool.query(`SELECT ${COLUMNS} FROM solve_jobs WHERE status IN ('queued', 'running') ORDER BY created_at, id`);
    return rows.map((row) => record(row as Record<string, unknown>)!);
  }

  async deleteExpired(now: number): Promise<number> {
    return (await this.#pool.query('DELETE FROM solve_jobs WHERE expires_at IS NOT NULL AND expires_at <= $1', [now])).rowCount ?? 0;
  }

  async close(): Promise<void> {
    await this.#pool.end();
  }
}
