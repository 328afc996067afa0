import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { ConfigError } from '../../src/shared/config-values.ts';
import { runCliToEnd } from '../helpers/daemon-process.ts';
import { loadServeArgs } from '../helpers/serve-config.ts';

/** `--telemetry`, `--telemetry-endpoint` and the interval knob, as `svc serve` reads them from flags, env and the config file. */
const dir = mkdtempSync(join(tmpdir(), 'svc-telemetry-config-'));
/** Config files live apart from the data dir, which would otherwise read its own config.toml. */
const files = mkdtempSync(join(tmpdir(), 'svc-telemetry-files-'));
after(() => {
  rmSync(dir, { recursive: true, force: true });
  rmSync(files, { recursive: true, force: true });
});

const refused = async (args: string[], pattern: RegExp, env: Record<string, string> = {}) => {
  await assert.rejects(loadServeArgs(['--data-dir', dir, ...args], env), (error: unknown) => error instanceof ConfigError && pattern.test(error.message));
};

test('none by default; basic with an endpoint from the flag, SVC_TELEMETRY_ENDPOINT or the config file', async () => {
  const defaults = await loadServeArgs(['--data-dir', dir]);
  assert.equal(defaults.telemetry, 'none');
  assert.equal(defaults.telemetrySettings.intervalMs, 24 * 60 * 60 * 1000);
  const flag = await loadServeArgs(['--data-dir', dir, '--telemetry', 'basic', '--telemetry-endpoint', 'https://t.example/svc']);
  assert.equal(flag.telemetry, 'basic');
  assert.equal(flag.telemetrySettings.endpoint?.href, 'https://t.example/svc');
  const env = await loadServeArgs(['--data-dir', dir], { SVC_TELEMETRY: 'basic', SVC_TELEMETRY_ENDPOINT: 'http://127.0.0.1:9/r', SVC_TELEMETRY_INTERVAL_MS: '250' });
  assert.deepEqual([env.telemetry, env.telemetrySettings.endpoint?.href, env.telemetrySettings.intervalMs], ['basic', 'http://127.0.0.1:9/r', 250]);
  const config = join(files, 'config.toml');
  writeFileSync(config, 'telemetry = "basic"\ntelemetry_endpoint = "https://t.example/from-file"\n');
  const file = await loadServeArgs(['--data-dir', dir, '--config', config]);
  assert.deepEqual([file.telemetry, file.telemetrySettings.endpoint?.href], ['basic', 'https://t.example/from-file']);
});

test('basic without an endpoint, a bad endpoint, an unknown mode and a bad interval are refused in one line', async () => {
  await refused(['--telemetry', 'basic'], /--telemetry basic needs --telemetry-endpoint <url>/);
  await refused(['--telemetry', 'basic', '--telemetry-endpoint', 'not a url'], /--telemetry-endpoint not a url: not a URL/);
  await refused(['--telemetry', 'basic', '--telemetry-endpoint', 'ftp://t.example/x'], /only http:\/\/ and https:\/\//);
  // new URL takes a bad %-escape in the user info; node:http would throw URIError at the first send.
  await refused(['--telemetry', 'basic', '--telemetry-endpoint', 'http://a%zz:s3cret@t.example/x'], /--telemetry-endpoint http:\/\/t\.example\/x: the user or password has a bad %-escape/);
  await refused(['--telemetry', 'basic', '--telemetry-endpoint', 'http://a:b%zz@t.example/x'], /bad %-escape/);
  await assert.rejects(loadServeArgs(['--data-dir', dir, '--telemetry', 'basic', '--telemetry-endpoint', 'http://a%zz:s3cret@t.example/x']), (error: Error) => !error.message.includes('s3cret'));
  // An endpoint is checked even while telemetry is none: a typo shows before it is switched on.
  await refused(['--telemetry-endpoint', 'file:///etc/passwd'], /only http:\/\/ and https:\/\//);
  const config = join(files, 'loud.toml');
  writeFileSync(config, 'telemetry = "loud"\n');
  await refused(['--config', config], /--telemetry loud: not one of none, basic.*set by 'telemetry'/);
  await refused([], /SVC_TELEMETRY_INTERVAL_MS: '5'/, { SVC_TELEMETRY_INTERVAL_MS: '5' });
});

test('svc serve --telemetry basic without an endpoint stops at start-up with exit 2 and says what is missing', async () => {
  const run = await runCliToEnd(['serve', '--port', '0', '--data-dir', dir, '--telemetry', 'basic']);
  assert.equal(run.code, 2);
  assert.match(run.stderr, /^svc serve: --telemetry basic needs --telemetry-endpoint <url> \(config telemetry_endpoint, env SVC_TELEMETRY_ENDPOINT\)/);
  const unknown = await runCliToEnd(['serve', '--port', '0', '--data-dir', dir, '--telemetry', 'full']);
  assert.notEqual(unknown.code, 0);
  assert.match(unknown.stderr, /'full' is invalid.*none, basic/s);
});
