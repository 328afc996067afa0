import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { DEFAULT_HOSTED_MODEL, defaultRouteConfig, ENGINE_DEFAULT_MODEL, loadRouteConfig, RouteConfigError } from '../../../src/hosted/routing/load-route-config.ts';

const dir = mkdtempSync(join(tmpdir(), 'svc-routes-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

const GOOD_TOML = `
default_policy = "supercomputer-fast"

[[models]]
id = "chat-large"
family = "chat"

[[backends]]
id = "vllm"
kind = "upstream"
sharing = "shared"
execution_plane = "supercomputer"
provider = "vllm"
models = { "chat-large" = "meta/llama-70b" }
energy = { joules_per_prompt_token = 0.01, joules_per_completion_token = 0.1, joules_per_second = 5 }
upstream = { base_url = "http://127.0.0.1:9/v1" }

[[backends]]
id = "engine"
kind = "engine"
sharing = "dedicated"
execution_plane = "supercomputer"
provider = "svc-llama.cpp"
models = { "chat-large" = "@default" }
energy = { joules_per_prompt_token = 0.06, joules_per_completion_token = 0.6, joules_per_second = 2 }

[[routes]]
policy = "supercomputer-fast"
queue_class = "interactive"
backends = ["vllm", "engine"]
`;

function badToml(replace: string, by: string): string {
  assert.ok(GOOD_TOML.includes(replace), replace);
  return GOOD_TOML.replace(replace, by);
}

describe('loadRouteConfig', () => {
  it('returns the embedded default without a path: engine-backed, both public policies, enterprise ones enterprise_only', () => {
    const config = loadRouteConfig();
    assert.deepEqual(config, defaultRouteConfig());
    assert.equal(config.default_policy, 'supercomputer-fast');
    const byPolicy = new Map(config.routes.map((r) => [r.policy, r]));
    assert.equal(byPolicy.get('supercomputer-fast')?.queue_class, 'interactive');
    assert.equal(byPolicy.get('supercomputer-deep')?.queue_class, 'deep');
    assert.equal(byPolicy.get('enterprise-private')?.enterprise_only, true);
    assert.equal(byPolicy.get('enterprise-byo')?.enterprise_only, true);
    assert.equal(byPolicy.get('supercomputer-fast')?.enterprise_only, false);
    const engine = config.backends.find((b) => b.id === 'engine');
    assert.equal(engine?.kind, 'engine');
    assert.equal(engine?.models[DEFAULT_HOSTED_MODEL], ENGINE_DEFAULT_MODEL);
  });

  it('reads TOML and JSON files', () => {
    const toml = loadRouteConfig(file('routes.toml', GOOD_TOML));
    assert.deepEqual(toml.routes[0]?.backends, ['vllm', 'engine']);
    assert.equal(toml.backends[0]?.upstream?.base_url, 'http://127.0.0.1:9/v1');
    const json = loadRouteConfig(file('routes.json', JSON.stringify(toml)));
    assert.deepEqual(json, toml);
  });

  const cases: [string, string, RegExp][] = [
    ['unknown backend in a route', badToml('backends = ["vllm", "engine"]', 'backends = ["vllm", "nope"]'), /names the backend 'nope', which is not defined/],
    ['duplicate backend ids', badToml('id = "engine"', 'id = "vllm"'), /two backends have the id 'vllm'/],
    ['upstream backend without its table', badToml('upstream = { base_url = "http://127.0.0.1:9/v1" }', ''), /backend 'vllm' is kind = "upstream" but has no \[backends.upstream\] table/],
    ['hosted model nobody maps', badToml('[[backends]]\nid = "vllm"', '[[models]]\nid = "orphan"\nfamily = "chat"\n\n[[backends]]\nid = "vllm"'), /no backend on any route maps the hosted model 'orphan'/],
    ['a map entry for an unlisted model', badToml('models = { "chat-large" = "meta/llama-70b" }', 'models = { "chat-large" = "m", "ghost" = "g" }'), /maps 'ghost', which is not a hosted model/],
    ['enterprise policy not enterprise_only', badToml('policy = "supercomputer-fast"\nqueue_class = "interactive"', 'policy = "enterprise-private"\nqueue_class = "enterprise"'), /'enterprise-private' must set enterprise_only = true/],
    ['default policy without a route', badToml('default_policy = "supercomputer-fast"', 'default_policy = "supercomputer-deep"'), /default_policy 'supercomputer-deep' has no route/],
    ['schema error names the path', badToml('joules_per_second = 5', 'joules_per_second = -5'), /at backends\.0\.energy\.joules_per_second:/],
    ['unknown key', badToml('provider = "vllm"', 'provider = "vllm"\nweight = 3'), /weight/],
    ['not TOML', '[[[', /not valid TOML/],
  ];
  for (const [name, text, message] of cases) {
    it(`refuses ${name} with a one-line message`, () => {
      const path = file(`bad-${name.replace(/\W+/g, '-')}.toml`, text);
      assert.throws(() => loadRouteConfig(path), (error: unknown) => {
        assert.ok(error instanceof RouteConfigError);
        assert.match(error.message, message);
        assert.ok(!error.message.includes('\n'), error.message);
        return true;
      });
    });
  }

  it('refuses a missing file by name', () => {
    assert.throws(() => loadRouteConfig(join(dir, 'absent.toml')), /absent\.toml: cannot be read \(ENOENT\)/);
  });
});
