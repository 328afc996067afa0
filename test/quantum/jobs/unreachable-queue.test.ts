/**
 * A shared queue whose Redis is away (configured, not running): a submission is refused within
 * its deadline with 503 solve_queue_unavailable and the job recorded failed (nothing runs later),
 * and closing does not wait for Redis forever.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ApiError } from '../../../src/shared/api-error.ts';
import { BullJobQueue } from '../../../src/quantum/jobs/bullmq-job-queue.ts';
import { SqliteSolveJobStore } from '../../../src/quantum/jobs/solve-job-store.ts';
import { SolveJobs } from '../../../src/quantum/jobs/solve-jobs.ts';
import { SolveService } from '../../../src/quantum/solve-service.ts';
import { freePort } from '../../helpers/free-port.ts';
import { patternProblem } from '../fixtures.ts';

test('Redis away: a job is refused with 503 solve_queue_unavailable and recorded failed; close returns', { timeout: 30_000 }, async () => {
  const service = new SolveService({ workers: 1 });
  const store = new SqliteSolveJobStore(':memory:');
  const queue = new BullJobQueue({ redisUrl: `redis://127.0.0.1:${await freePort()}` });
  const jobs = await SolveJobs.open({ service, store, queue });
  try {
    const refused = await jobs.submit({ solver: 'grover', problem: patternProblem(8, 3) }, { owner: 'local' }).then(() => undefined, (error: unknown) => error);
    assert.ok(refused instanceof ApiError, String(refused));
    assert.equal(refused.status, 503);
    assert.equal(refused.code, 'solve_queue_unavailable');
    const [job] = await store.unfinished();
    assert.equal(job, undefined, 'nothing is left queued to run later');
  } finally {
    const started = Date.now();
    await jobs.close();
    assert.ok(Date.now() - started < 10_000, `close took ${Date.now() - started} ms`);
    await store.close();
    await service.close();
  }
});
