import assert from 'node:assert/strict';
import { test } from 'node:test';
import { resolveHostedConfig } from '../../src/cli/hosted-command.ts';
import { resolveWorkerConfig } from '../../src/cli/worker-command.ts';
import { ConfigError } from '../../src/shared/config-values.ts';

const REDIS = 'redis://127.0.0.1:6379';
const PG = 'postgres://svc@127.0.0.1:5432/svc';

test('svc worker needs the gateways\' Redis and PostgreSQL, and checks its numbers', () => {
  assert.throws(() => resolveWorkerConfig({ databaseUrl: PG }), (e: Error) => e instanceof ConfigError && /--redis-url/.test(e.message));
  assert.throws(() => resolveWorkerConfig({ redisUrl: REDIS }), (e: Error) => e instanceof ConfigError && /--database-url/.test(e.message));
  assert.throws(() => resolveWorkerConfig({ redisUrl: REDIS, databaseUrl: 'sqlite:///x.db' }), /--database-url/);
  assert.throws(() => resolveWorkerConfig({ redisUrl: REDIS, databaseUrl: PG, workers: '0' }), /--workers: '0'/);
  assert.throws(() => resolveWorkerConfig({ redisUrl: REDIS, databaseUrl: PG, workers: 'many' }), /--workers/);
  assert.throws(() => resolveWorkerConfig({ redisUrl: REDIS, databaseUrl: PG, redisKeyPrefix: 'has space' }), /--redis-key-prefix/);
  assert.throws(() => resolveWorkerConfig({ redisUrl: REDIS, databaseUrl: PG, jobLock: 'soon' }), ConfigError);
  const config = resolveWorkerConfig({ redisUrl: REDIS, databaseUrl: PG, workers: '4', jobLock: '5s' });
  assert.deepEqual([config.workers, config.lockDurationMs, config.hardware], [4, 5000, undefined]);
});

test('svc hosted --no-local-solves needs --redis-url (jobs would wait for workers that cannot see them)', () => {
  assert.throws(() => resolveHostedConfig({ localSolves: false }, {}), (e: Error) => e instanceof ConfigError && /--no-local-solves/.test(e.message));
  assert.equal(resolveHostedConfig({ localSolves: false, redisUrl: REDIS }, {}).localSolves, false);
  assert.equal(resolveHostedConfig({}, {}).localSolves, true);
  assert.equal(resolveHostedConfig({ jobLock: '2s' }, {}).solveJobLockMs, 2000);
});
