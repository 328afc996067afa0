import assert from 'node:assert/strict';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { DEFAULT_HOSTED_PORT, resolveHostedConfig } from '../../src/cli/hosted-command.ts';
import { ConfigError } from '../../src/shared/config-values.ts';

test('svc hosted defaults: 127.0.0.1:11450, ~/.svc/hosted, no CORS origin, 8 MiB bodies', () => {
  const config = resolveHostedConfig({}, {});
  assert.equal(config.host, '127.0.0.1');
  assert.equal(config.port, DEFAULT_HOSTED_PORT);
  assert.equal(config.port, 11450);
  assert.equal(config.dataDir, join(homedir(), '.svc', 'hosted'));
  assert.deepEqual(config.corsOrigins, []);
  assert.equal(config.bodyLimit, 8 * 1024 * 1024);
  assert.equal(config.enterprise, false);
  assert.deepEqual(config.release, { downloadUrl: undefined, updaterManifestUrl: undefined, notes: undefined });
});

test('svc hosted takes any address (it is the public tier) and checks what it is given', () => {
  assert.equal(resolveHostedConfig({ host: '0.0.0.0', port: '0' }, {}).host, '0.0.0.0');
  assert.equal(resolveHostedConfig({ host: '[::]' }, {}).host, '::');
  assert.deepEqual(resolveHostedConfig({ corsOrigin: ['https://a.example', 'http://localhost:3000,*'] }, {}).corsOrigins, ['https://a.example', 'http://localhost:3000', '*']);
  assert.throws(() => resolveHostedConfig({ port: '70000' }, {}), ConfigError);
  assert.throws(() => resolveHostedConfig({ port: 'abc' }, {}), ConfigError);
  assert.throws(() => resolveHostedConfig({ corsOrigin: ['https://a.example/path'] }, {}), ConfigError);
  assert.throws(() => resolveHostedConfig({ corsOrigin: ['ftp://a.example'] }, {}), ConfigError);
  assert.throws(() => resolveHostedConfig({ bodyLimit: 'lots' }, {}), ConfigError);
  assert.equal(resolveHostedConfig({}, { SVC_DOWNLOAD_URL: 'https://dl.example' }).release.downloadUrl, 'https://dl.example');
});

test('svc hosted takes the engine flags of svc serve, checked the same way', () => {
  const config = resolveHostedConfig({ dataDir: '/srv/hosted', model: ['chat=/m/a.gguf,/m/b.gguf'], discover: 'none', threads: '3', parallel: '2', contextSize: '2048', keepAlive: '30s' }, {});
  assert.equal(config.engine.dataDir, '/srv/hosted');
  assert.deepEqual(config.engine.models.map((m) => m.id), ['chat', 'b']);
  assert.equal(config.engine.discover.size, 0);
  assert.equal(config.engine.threads, 3);
  assert.equal(config.engine.parallel, 2);
  assert.equal(config.engine.contextSize, 2048);
  assert.equal(config.engine.keepAliveMs, 30_000);
  // Defaults as svc serve's: every discoverable store, 4 in parallel, 5 minutes' keep-alive.
  const defaults = resolveHostedConfig({}, {}).engine;
  assert.ok(defaults.discover.size > 0);
  assert.equal(defaults.parallel, 4);
  assert.equal(defaults.keepAliveMs, 300_000);
  assert.throws(() => resolveHostedConfig({ threads: '0' }, {}), /--threads/);
  assert.throws(() => resolveHostedConfig({ parallel: 'many' }, {}), /--parallel/);
  assert.throws(() => resolveHostedConfig({ discover: 'winamp' }, {}), /--discover/);
});

test('svc hosted --database-pool-size: a whole number from 1 to 1000', () => {
  assert.equal(resolveHostedConfig({}, {}).databasePoolSize, undefined);
  assert.equal(resolveHostedConfig({ databasePoolSize: '24' }, {}).databasePoolSize, 24);
  for (const bad of ['0', '1001', '2.5', 'many']) assert.throws(() => resolveHostedConfig({ databasePoolSize: bad }, {}), ConfigError, bad);
});

test('svc hosted --redis-key-prefix: two deployments on one Redis keep their limits apart; a bad prefix is refused', () => {
  assert.equal(resolveHostedConfig({}, {}).redisKeyPrefix, undefined);
  assert.equal(resolveHostedConfig({ redisKeyPrefix: 'staging:rl:' }, {}).redisKeyPrefix, 'staging:rl:');
  assert.throws(() => resolveHostedConfig({ redisKeyPrefix: 'has space' }, {}), ConfigError);
  assert.throws(() => resolveHostedConfig({ redisKeyPrefix: '' }, {}), ConfigError);
  assert.throws(() => resolveHostedConfig({ redisKeyPrefix: 'x'.repeat(65) }, {}), ConfigError);
});
