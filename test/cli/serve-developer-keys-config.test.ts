/**
 * The developer-key options of `svc serve` through the real command definition: flags, SVC_*
 * variables and config-file keys, defaults, and the checks that refuse a bad value.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { ConfigError } from '../../src/shared/config-values.ts';
import { loadServeArgs } from '../helpers/serve-config.ts';

const load = loadServeArgs;

describe('svc serve developer-key options', () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-devkeys-config-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('is off unless a source is given; the defaults are generous', async () => {
    assert.equal((await load(['--data-dir', dir])).developerKeys, undefined);
    const config = await load(['--data-dir', dir, '--developer-keys', 'keys.json']);
    assert.deepEqual(config.developerKeys, { source: join(process.cwd(), 'keys.json'), required: false, limit: { requests_per_second: 100, burst: 500 } });
  });

  it('reads the SVC_* variables, and keeps a postgres URL as given', async () => {
    const url = 'postgres://dev:secret@db.internal:5432/svc';
    const config = await load(['--data-dir', dir], { SVC_DEVELOPER_KEYS: url, SVC_REQUIRE_DEVELOPER_KEY: '1', SVC_DEVELOPER_KEY_RATE: '2.5', SVC_DEVELOPER_KEY_BURST: '7' });
    assert.deepEqual(config.developerKeys, { source: url, required: true, limit: { requests_per_second: 2.5, burst: 7 } });
  });

  it('takes developer_keys and require_developer_key from the config file: a path relative to the file, a URL untouched', async () => {
    // Not in the data dir, where it would be found by default by the other tests.
    const file = join(dir, 'elsewhere.toml');
    writeFileSync(file, 'developer_keys = "keys/dev.json"\nrequire_developer_key = true\n');
    const config = await load(['--data-dir', dir, '--config', file]);
    assert.equal(config.developerKeys?.source, join(dir, 'keys', 'dev.json'));
    assert.equal(config.developerKeys?.required, true);
    writeFileSync(file, 'developer_keys = "postgresql://postgres@127.0.0.1/test"\n');
    assert.equal((await load(['--data-dir', dir, '--config', file])).developerKeys?.source, 'postgresql://postgres@127.0.0.1/test');
  });

  it('refuses enforcement without a source and a bad rate or burst, in one line', async () => {
    await assert.rejects(load(['--data-dir', dir, '--require-developer-key']), (e: Error) => e instanceof ConfigError && /needs --developer-keys/.test(e.message));
    for (const [flag, value] of [['--developer-key-rate', '0'], ['--developer-key-rate', 'fast'], ['--developer-key-burst', '0'], ['--developer-key-burst', '1.5']] as const) {
      await assert.rejects(load(['--data-dir', dir, '--developer-keys', 'k.json', flag, value]), (e: Error) => e instanceof ConfigError && e.message.startsWith(`${flag}: '${value}'`), `${flag} ${value}`);
    }
  });
});
