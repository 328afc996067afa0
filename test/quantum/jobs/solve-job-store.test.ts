import assert from 'node:assert/strict';
import { describe, it, after } from 'node:test';
import { PostgresSolveJobStore } from '../../../src/quantum/jobs/postgres-solve-job-store.ts';
import { SqliteSolveJobStore, type SolveJobRecord, type SolveJobStore } from '../../../src/quantum/jobs/solve-job-store.ts';
import { freshPostgresSchema } from '../../helpers/hosted-stores.ts';
import { postgresUnavailable, TEST_DATABASE_URL } from '../../helpers/test-services.ts';

const NO_POSTGRES = await postgresUnavailable('the PostgreSQL solve-job store tests');

function job(id: string, extra: Partial<SolveJobRecord> = {}): SolveJobRecord {
  return {
    id, owner: 'acct', client_job_id: null, body: '{}', solver: 'grover', substrate: 'local', problems: 1, priority: 5,
    status: 'queued', attempts: 0, created_at: 1000, started_at: null, finished_at: null, expires_at: null, result: null, error: null, ...extra,
  };
}

/** The same behaviour from both stores: what SolveJobs relies on. */
function contract(open: () => Promise<SolveJobStore>, skip: string | false = false) {
  it('a client_job_id is the owner\'s: the second insert returns the first job, another owner gets its own', { skip }, async () => {
    const store = await open();
    assert.equal((await store.insert(job('qjob_1', { client_job_id: 'c' }))).created, true);
    const again = await store.insert(job('qjob_2', { client_job_id: 'c' }));
    assert.deepEqual([again.created, again.job.id], [false, 'qjob_1']);
    assert.equal((await store.insert(job('qjob_3', { owner: 'other', client_job_id: 'c' }))).created, true);
    assert.equal(await store.get('qjob_2'), undefined);
    await store.close();
  });

  it('one outcome per job: the first finish wins, a restart counts attempts, expired jobs are forgotten', { skip }, async () => {
    const store = await open();
    await store.insert(job('qjob_a'));
    assert.equal(await store.start('qjob_a', 2000), true);
    // Delivered again after a lost worker: it may start again while unfinished.
    assert.equal(await store.start('qjob_a', 2500), true);
    assert.equal((await store.get('qjob_a'))!.attempts, 2);
    assert.deepEqual((await store.unfinished()).map((j) => j.id), ['qjob_a']);
    assert.equal(await store.finish('qjob_a', { status: 'completed', result: '{"x":1}' }, 3000, 9000), true);
    assert.equal(await store.finish('qjob_a', { status: 'completed', result: '{"x":2}' }, 3100, 9100), false);
    assert.equal(await store.finish('qjob_a', { status: 'cancelled', error: '{}' }, 3100, 9100), false);
    assert.equal(await store.start('qjob_a', 3200), false);
    const done = (await store.get('qjob_a'))!;
    assert.deepEqual([done.status, done.result, done.finished_at, done.expires_at], ['completed', '{"x":1}', 3000, 9000]);
    assert.deepEqual(await store.unfinished(), []);
    assert.equal(await store.deleteExpired(8999), 0);
    assert.equal(await store.deleteExpired(9000), 1);
    assert.equal(await store.get('qjob_a'), undefined);
    await store.close();
  });
}

describe('SqliteSolveJobStore', () => contract(async () => new SqliteSolveJobStore(':memory:')));

describe('PostgresSolveJobStore', () => {
  const schemas: (() => Promise<void>)[] = [];
  after(async () => { for (const drop of schemas) await drop(); });
  contract(async () => {
    const { schema, drop } = freshPostgresSchema();
    schemas.push(drop);
    return PostgresSolveJobStore.open(TEST_DATABASE_URL, { schema });
  }, NO_POSTGRES);
});
