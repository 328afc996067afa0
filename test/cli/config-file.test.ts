/**
 * The config file through the real `svc serve` command definition (commander parses flags
 * and SVC_* variables as it does for users): precedence flags > env > file > defaults,
 * unknown keys refused in one line, upstream tables, paths, formats.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { inspect } from 'node:util';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, test } from 'node:test';
import { ConfigError } from '../../src/shared/config-values.ts';
import { loadServeArgs } from '../helpers/serve-config.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

const load = loadServeArgs;

function dir(): string {
  return mkdtempSync(join(tmpdir(), 'svc-config-'));
}

function file(name: string, text: string, where = dir()): string {
  const path = join(where, name);
  writeFileSync(path, text);
  return path;
}

async function refused(args: string[], pattern: RegExp, env: Record<string, string> = {}): Promise<string> {
  try {
    await load(args, env);
  } catch (error) {
    assert.ok(error instanceof ConfigError, `expected a ConfigError, got ${String(error)}`);
    assert.match(error.message, pattern);
    assert.ok(!error.message.includes('\n'), 'one line');
    return error.message;
  }
  assert.fail('expected the configuration to be refused');
}

describe('precedence: flags > env > file > defaults', () => {
  const config = file('config.toml', 'max_tokens = 3\nparallel = 2\n');

  test('the file sets what nothing else does; defaults fill the rest', async () => {
    const c = await load(['--config', config]);
    assert.equal(c.defaultMaxTokens, 3);
    assert.equal(c.parallel, 2);
    assert.equal(c.queueSize, 32);
  });

  test('an SVC_* variable beats the file', async () => {
    const c = await load(['--config', config], { SVC_MAX_TOKENS: '5' });
    assert.equal(c.defaultMaxTokens, 5);
    assert.equal(c.parallel, 2);
  });

  test('a flag beats the variable and the file', async () => {
    const c = await load(['--config', config, '--max-tokens', '4'], { SVC_MAX_TOKENS: '5' });
    assert.equal(c.defaultMaxTokens, 4);
  });

  test('SVC_CONFIG names the file too', async () => {
    assert.equal((await load([], { SVC_CONFIG: config })).defaultMaxTokens, 3);
  });
});

describe('keys and values', () => {
  test('every serve option has a snake_case key; numbers, lists and paths as a file writes them', async () => {
    const where = dir();
    const config = file('config.toml', `
port = [8080, 9090]
host = "127.0.0.1"
data_dir = "data"
model = ["small=models/small.gguf", "~/big.gguf"]
log_level = "warn"
keep_alive = 60
queue_size = 8
context_size = 1024
gpu = "cpu"
threads = 1
body_limit = "1mb"
request_timeout = "10s"
shutdown_timeout = 2
telemetry = "none"
pqc_transport = []
`, where);
    const c = await load(['--config', config]);
    assert.deepEqual(c.ports, [8080, 9090]);
    assert.deepEqual(c.hosts, ['127.0.0.1']);
    assert.equal(c.dataDir, join(where, 'data'));
    assert.deepEqual(c.models, [{ id: 'small', path: join(where, 'models/small.gguf') }, { id: 'big', path: join(homedir(), 'big.gguf') }]);
    assert.equal(c.logLevel, 'warn');
    assert.equal(c.keepAliveMs, 60_000);
    assert.equal(c.queueSize, 8);
    assert.equal(c.contextSize, 1024);
    assert.equal(c.gpu, 'cpu');
    assert.equal(c.threads, 1);
    assert.equal(c.bodyLimit, 1024 * 1024);
    assert.equal(c.requestTimeoutMs, 10_000);
    assert.equal(c.shutdownGraceMs, 2000);
  });

  test('an unknown key is refused in one line that names it (and lists the known ones)', async () => {
    const message = await refused(['--config', file('config.toml', 'max_token = 3\n')], /unknown key 'max_token'/);
    assert.match(message, /known: .*max_tokens/);
    await refused(['--config', file('config.toml', '[[upstreams]]\nname = "a"\nbase_url = "http://127.0.0.1:1/v1"\napi_key = "sk-x"\n')], /unknown key 'upstreams\[0\]\.api_key'/);
    await refused(['--config', file('config.toml', '[[upstreams]]\nname = "a"\nbase_url = "http://127.0.0.1:1/v1"\ntimeouts = { read = "1s" }\n')], /unknown key 'upstreams\[0\]\.timeouts\.read'/);
    await refused(['--config', file('config.toml', 'config = "other.toml"\n')], /unknown key 'config'/);
  });

  test('a bad value names the key and the file it came from', async () => {
    const config = file('config.toml', 'port = 70000\n');
    const message = await refused(['--config', config], /--port: '70000'/);
    assert.match(message, new RegExp(`set by 'port' in ${config.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
    await refused(['--config', file('config.toml', 'parallel = true\n')], /'parallel'/);
    await refused(['--config', file('config.toml', 'telemetry = "basic"\n')], /telemetry/);
    await refused(['--config', file('config.toml', 'pqc_transport = ["ml-kem-768", "slh-dsa-sha2-128s"]\n')], /SLH-DSA is a v1\.1 transport feature.*set by 'pqc_transport'/);
    assert.deepEqual((await load(['--config', file('config.toml', 'pqc_transport = ["ml-kem-768", "ml-dsa-65"]\n')])).pqcTransport?.names, ['ml-kem-768', 'ml-dsa-65']);
    assert.deepEqual((await load(['--config', file('config.toml', 'pqc_transport = "ml-kem-1024,ml-dsa-87"\n')])).pqcTransport?.names, ['ml-kem-1024', 'ml-dsa-87']);
  });

  test('TOML and JSON syntax errors are one line with the position', async () => {
    await refused(['--config', file('config.toml', 'port = \n')], /invalid TOML at line 1/);
    await refused(['--config', file('config.json', '{"port": }')], /invalid JSON/);
  });

  test('config.json is read as JSON', async () => {
    assert.equal((await load(['--config', file('config.json', '{"max_tokens": 7, "upstreams": [{"name": "a", "base_url": "http://127.0.0.1:1"}]}')])).defaultMaxTokens, 7);
  });
});

describe('where the file is', () => {
  test('<data-dir>/config.toml or config.json is read when present; both is ambiguous', async () => {
    const where = dir();
    assert.equal((await load(['--data-dir', where])).defaultMaxTokens, 2048, 'no file: defaults');
    file('config.toml', 'max_tokens = 9\n', where);
    assert.equal((await load(['--data-dir', where])).defaultMaxTokens, 9);
    assert.equal((await load([], { SVC_DATA_DIR: where })).defaultMaxTokens, 9);
    file('config.json', '{}', where);
    await refused(['--data-dir', where], /both .*config\.toml and .*config\.json exist/);
  });

  test('--config naming a missing file is an error, not a silent default', async () => {
    await refused(['--config', join(dir(), 'nope.toml')], /--config .*nope\.toml: no such file/);
  });
});

describe('upstreams', () => {
  test('api_key_env is looked up as an own variable: constructor or toString find no key', async () => {
    const config = file('config.toml', `
[[upstreams]]
name = "odd"
base_url = "https://api.example.com/v1"
api_key_env = "constructor"

[[upstreams]]
name = "odder"
base_url = "https://api.example.com/v1"
api_key_env = "toString"
`);
    const resolved = await load(['--config', config], {});
    assert.deepEqual(resolved.upstreams.map((u) => u.apiKey), [undefined, undefined]);
  });

  test('tables resolve: key from its variable, kind from the host, /v1 added to a bare origin, defaults', async () => {
    const config = file('config.toml', `
[[upstreams]]
name = "ollama"
base_url = "http://127.0.0.1:11434"

[[upstreams]]
name = "openai"
base_url = "https://api.openai.com/v1/"
api_key_env = "MY_OPENAI_KEY"
models = ["gpt-4o-mini"]
timeouts = { connect = "3s", first_byte = 30 }
headers = { "OpenAI-Organization" = "org-1" }

[[upstreams]]
name = "lan"
base_url = "http://192.168.1.20:8000/v1"
kind = "local"
`);
    const resolved = await load(['--config', config], { MY_OPENAI_KEY: 'sk-123' });
    const [ollama, openai, lan] = resolved.upstreams;
    // The key is there to send, and nowhere else: not in JSON, not in what a logger prints.
    assert.equal(openai!.apiKey?.reveal(), 'sk-123');
    assert.ok(!JSON.stringify(resolved).includes('sk-123'));
    assert.ok(!inspect(resolved, { depth: 10 }).includes('sk-123'));
    assert.ok(!String(openai!.apiKey).includes('sk-123'));
    assert.deepEqual(ollama, { name: 'ollama', baseUrl: 'http://127.0.0.1:11434/v1', kind: 'local', discover: true, connectTimeoutMs: 10_000, firstByteTimeoutMs: 120_000 });
    assert.deepEqual(openai, {
      name: 'openai', baseUrl: 'https://api.openai.com/v1', kind: 'remote', apiKeyEnv: 'MY_OPENAI_KEY', apiKey: openai!.apiKey,
      models: ['gpt-4o-mini'], discover: false, connectTimeoutMs: 3000, firstByteTimeoutMs: 30_000, headers: { 'OpenAI-Organization': 'org-1' },
    });
    assert.equal(lan!.kind, 'local', 'an explicit kind wins');
  });

  test('--upstream and SVC_UPSTREAM add upstreams; one named like a file table replaces it', async () => {
    const config = file('config.toml', '[[upstreams]]\nname = "a"\nbase_url = "http://127.0.0.1:1/v1"\n\n[[upstreams]]\nname = "b"\nbase_url = "http://127.0.0.1:2/v1"\n');
    const flagged = await load(['--config', config, '--upstream', 'b=http://127.0.0.1:3/v1', '--upstream', 'c=http://example.com/v1']);
    assert.deepEqual(flagged.upstreams.map((u) => [u.name, u.baseUrl, u.kind]), [
      ['a', 'http://127.0.0.1:1/v1', 'local'], ['b', 'http://127.0.0.1:3/v1', 'local'], ['c', 'http://example.com/v1', 'remote'],
    ]);
    const env = await load([], { SVC_UPSTREAM: 'x=http://127.0.0.1:4/v1,y=http://[::1]:5' });
    assert.deepEqual(env.upstreams.map((u) => [u.name, u.baseUrl, u.kind]), [['x', 'http://127.0.0.1:4/v1', 'local'], ['y', 'http://[::1]:5/v1', 'local']]);
  });

  test('bad upstreams are refused with the upstream named', async () => {
    await refused(['--upstream', 'nourl'], /NAME=URL/);
    await refused(['--upstream', 'a/b=http://127.0.0.1:1'], /no slash/);
    await refused(['--upstream', 'a=ftp://127.0.0.1:1'], /upstream 'a': base_url must be http/);
    await refused(['--upstream', 'a=http://user:sk-secret@127.0.0.1:1/v1'], /must not carry credentials/);
    await refused(['--upstream', 'a=http://127.0.0.1:1/v1?key=sk-secret'], /must not have a query/);
    await refused(['--upstream', 'a=http://127.0.0.1:1', '--upstream', 'a=http://127.0.0.1:2'], /names 'a' twice/);
    const twice = file('config.toml', '[[upstreams]]\nname = "a"\nbase_url = "http://127.0.0.1:1"\n[[upstreams]]\nname = "a"\nbase_url = "http://127.0.0.1:2"\n');
    await refused(['--config', twice], /Two upstreams are named 'a'/);
    const noModels = file('config.toml', '[[upstreams]]\nname = "a"\nbase_url = "http://127.0.0.1:1"\ndiscover = false\n');
    await refused(['--config', noModels], /discover = false and no models/);
    const header = file('config.toml', '[[upstreams]]\nname = "a"\nbase_url = "http://127.0.0.1:1"\nheaders = { Authorization = "Bearer sk-x" }\n');
    await refused(['--config', header], /api_key_env/);
  });
});

test('svc serve with a bad config file exits 2 with one line on stderr', () => {
  const config = file('config.toml', 'prot = 1\n');
  const run = spawnSync(process.execPath, [join(ROOT, 'src/cli/main.ts'), 'serve', '--config', config], { encoding: 'utf8', timeout: 30_000 });
  assert.equal(run.status, 2);
  assert.equal(run.stderr.trim().split('\n').length, 1);
  assert.match(run.stderr, /^svc serve: config file .*: unknown key 'prot'/);
});
