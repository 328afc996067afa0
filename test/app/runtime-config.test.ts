import assert from 'node:assert/strict';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { defaultThreads } from '../../src/inference/cpu-threads.ts';
import { isLoopbackHostname } from '../../src/shared/loopback-hostname.ts';
import { resolveRuntimeConfig } from '../../src/app/runtime-config.ts';
import { tinyModelPath } from '../helpers/daemon-process.ts';
import { ConfigError, parseBytes, parseDuration } from '../../src/shared/config-values.ts';

test('defaults: both contract ports on both loopback addresses, ~/.svc, 5 minute keep-alive', () => {
  const config = resolveRuntimeConfig({});
  assert.deepEqual(config.ports, [11435, 11440]);
  assert.deepEqual(config.hosts, ['127.0.0.1', '::1']);
  assert.equal(config.dataDir, join(homedir(), '.svc'));
  assert.equal(config.keepAliveMs, 300_000);
  assert.equal(config.parallel, 4);
  assert.equal(config.telemetry, 'none');
});

test('--threads defaults to physical cores minus one (never left to node-llama-cpp, which picks at least 4)', () => {
  assert.equal(resolveRuntimeConfig({}).threads, defaultThreads());
  assert.equal(resolveRuntimeConfig({ threads: '' }).threads, defaultThreads());
  assert.equal(resolveRuntimeConfig({ threads: '3' }).threads, 3);
  assert.throws(() => resolveRuntimeConfig({ threads: '0' }), /--threads/);
});

test('repeatable flags and comma-separated environment values', () => {
  const config = resolveRuntimeConfig({ port: ['8080,9090', '0'], model: ['a=/m/a.gguf', '/m/b.gguf'] });
  assert.deepEqual(config.ports, [8080, 9090, 0]);
  assert.deepEqual(config.models.map((m) => m.id), ['a', 'b']);
});

test('non-loopback hosts and bad values are refused with the flag named', () => {
  assert.throws(() => resolveRuntimeConfig({ host: ['0.0.0.0'] }), (e: unknown) => e instanceof ConfigError && /--host 0\.0\.0\.0/.test(e.message));
  assert.throws(() => resolveRuntimeConfig({ host: ['::'] }), ConfigError);
  assert.throws(() => resolveRuntimeConfig({ port: ['70000'] }), /--port/);
  assert.throws(() => resolveRuntimeConfig({ parallel: 'many' }), /--parallel/);
  assert.throws(() => resolveRuntimeConfig({ keepAlive: 'soon' }), /--keep-alive/);
  assert.throws(() => resolveRuntimeConfig({ telemetry: 'basic' }), /telemetry/);
  assert.deepEqual(resolveRuntimeConfig({ host: ['localhost', '[::1]'] }).hosts, ['127.0.0.1', '::1']);
});

test('durations and sizes', () => {
  assert.equal(parseDuration('30s', 'x'), 30_000);
  assert.equal(parseDuration('5m', 'x'), 300_000);
  assert.equal(parseDuration('250ms', 'x'), 250);
  assert.equal(parseDuration('10', 'x'), 10_000);
  assert.equal(parseDuration('0', 'x'), 0);
  assert.equal(parseDuration('-1', 'x'), Number.POSITIVE_INFINITY);
  assert.equal(parseDuration('forever', 'x'), Number.POSITIVE_INFINITY);
  assert.equal(parseDuration('30d', 'x'), 30 * 86_400_000);
  assert.equal(parseBytes('16mb', 'x'), 16 * 1024 * 1024);
  assert.equal(parseBytes('512k', 'x'), 512 * 1024);
  assert.equal(parseBytes('100', 'x'), 100);
  assert.throws(() => parseBytes('lots', 'x'), ConfigError);
});

test('loopback host names', () => {
  for (const h of ['localhost', 'LOCALHOST', 'app.localhost', '127.0.0.1', '127.1.2.3', '::1', '[::1]', 'localhost.']) assert.ok(isLoopbackHostname(h), h);
  for (const h of ['0.0.0.0', '::', '10.0.0.1', 'example.com', 'localhost.example.com', '128.0.0.1', 'null']) assert.ok(!isLoopbackHostname(h), h);
});

test('the responses store: 30 days and 1 GiB by default; both flags checked; --responses-max-size 0 keeps none', () => {
  assert.deepEqual(resolveRuntimeConfig({}).responses, { retentionMs: 30 * 86_400_000, maxBytes: 1024 ** 3 });
  assert.deepEqual(resolveRuntimeConfig({ responsesRetention: '12h', responsesMaxSize: '64mb' }).responses, { retentionMs: 12 * 3_600_000, maxBytes: 64 * 1024 ** 2 });
  assert.equal(resolveRuntimeConfig({ responsesRetention: 'forever' }).responses?.retentionMs, Number.POSITIVE_INFINITY);
  assert.equal(resolveRuntimeConfig({ responsesMaxSize: '0' }).responses, undefined);
  assert.throws(() => resolveRuntimeConfig({ responsesRetention: '10s' }), (e: unknown) => e instanceof ConfigError && /--responses-retention.*--responses-max-size 0/.test(e.message));
  assert.throws(() => resolveRuntimeConfig({ responsesMaxSize: 'big' }), /--responses-max-size/);
});

test('--speculative: off by default; --draft-model alone means draft; contradictions are refused with one line', () => {
  const draft = tinyModelPath();
  assert.deepEqual(resolveRuntimeConfig({}).speculative, { mode: 'off' });
  assert.deepEqual(resolveRuntimeConfig({ speculative: 'LOOKUP' }).speculative, { mode: 'lookup' });
  assert.deepEqual(resolveRuntimeConfig({ draftModel: draft }).speculative, { mode: 'draft', draftModelPath: draft });
  assert.deepEqual(resolveRuntimeConfig({ speculative: 'draft', draftModel: draft }).speculative, { mode: 'draft', draftModelPath: draft });
  const refused = (raw: Parameters<typeof resolveRuntimeConfig>[0], message: RegExp): void => {
    assert.throws(() => resolveRuntimeConfig(raw), (e: unknown) => e instanceof ConfigError && message.test(e.message));
  };
  refused({ speculative: 'ngram' }, /^--speculative: 'ngram' is not one of off, lookup, draft\.$/);
  refused({ speculative: 'draft' }, /^--speculative draft needs --draft-model/);
  refused({ speculative: 'lookup', draftModel: draft }, /^--draft-model is used by --speculative draft only; --speculative is lookup\.$/);
  refused({ draftModel: '/nonexistent/draft.gguf' }, /^--draft-model \/nonexistent\/draft\.gguf: no such file\.$/);
});
