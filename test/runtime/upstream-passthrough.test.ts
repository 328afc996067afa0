/**
 * End to end: svc in front of a SECOND real OpenAI-protocol process — another `svc serve`
 * with the fixture model — configured by a config file and driven with the official `openai`
 * client, compared with calling the upstream directly. Scripted servers stand in where a real
 * upstream cannot misbehave on demand (never answering, refusing svc's key).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import { startDaemon, waitForHealth, type DaemonProcess } from '../helpers/daemon-process.ts';
import { answer, sse, startScriptedUpstream, type ScriptedUpstream } from '../helpers/scripted-upstream.ts';
import { freePort } from '../helpers/free-port.ts';
import { rejectionOf } from '../helpers/rejection-of.ts';

const KEY = 'sk-e2e-KEY-7f3a9c1d5e8b2046';

interface Health {
  status: string;
  outbound_connections: number;
  model: { active: number; waiting: number; loaded: string[] };
  upstreams: { name: string; kind: string; base_url: string; reachable: boolean | null; connections: number; active: number; models: number }[];
}

let upstream: DaemonProcess;
let victim: DaemonProcess;
let svc: DaemonProcess;
let silent: ScriptedUpstream;
let keyed: ScriptedUpstream;
let tooling: ScriptedUpstream;
let client: OpenAI;
let direct: OpenAI;

before(async () => {
  [upstream, victim, silent, keyed, tooling] = await Promise.all([
    startDaemon(),
    startDaemon(),
    startScriptedUpstream(() => {}),
    startScriptedUpstream(answer(401, { error: { message: `Incorrect API key provided: ${KEY}` } })),
    // Streams two tool calls the way Ollama does: whole, without index, finishing with "stop".
    startScriptedUpstream(sse([
      { choices: [{ index: 0, delta: { role: 'assistant', content: '' } }] },
      { choices: [{ index: 0, delta: { tool_calls: [{ id: 'call_w', function: { name: 'get_weather', arguments: { city: 'Oslo' } } }] } }] },
      { choices: [{ index: 0, delta: { tool_calls: [{ id: 'call_t', function: { name: 'get_time', arguments: '{}' } }] } }] },
      { choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] },
      { choices: [], usage: { prompt_tokens: 12, completion_tokens: 9 } },
      'data: [DONE]',
    ])),
  ]);
  const dir = mkdtempSync(join(tmpdir(), 'svc-upstream-e2e-'));
  const config = join(dir, 'config.toml');
  writeFileSync(config, `
log_level = "trace"

[[upstreams]]
name = "up"
base_url = "${upstream.url}/v1"
kind = "remote"

[[upstreams]]
name = "loc"
base_url = "${upstream.url}"
models = ["tiny"]

[[upstreams]]
name = "victim"
base_url = "${victim.url}/v1"

[[upstreams]]
name = "silent"
base_url = "${silent.baseUrl}"
models = ["m"]
timeouts = { first_byte = "500ms" }

[[upstreams]]
name = "gone"
base_url = "http://127.0.0.1:${await freePort()}/v1"
models = ["m"]

[[upstreams]]
name = "tools"
base_url = "${tooling.baseUrl}"
models = ["m"]

[[upstreams]]
name = "keyed"
base_url = "${keyed.baseUrl}"
api_key_env = "SVC_TEST_UPSTREAM_KEY"
models = ["m"]
discover = true
`);
  svc = await startDaemon({ withModel: false, args: ['--config', config], env: { SVC_TEST_UPSTREAM_KEY: KEY } });
  client = new OpenAI({ baseURL: `${svc.url}/v1`, apiKey: 'client-key-not-forwarded', maxRetries: 0 });
  direct = new OpenAI({ baseURL: `${upstream.url}/v1`, apiKey: 'none', maxRetries: 0 });
});

after(async () => {
  assert.equal(await svc.stop(), 0);
  await Promise.all([upstream.stop(), victim.stop(), silent.close(), keyed.close(), tooling.close()]);
  // The key never reached svc's logs, whatever happened above (log level: trace).
  const output = svc.logs.map((l) => JSON.stringify(l)).join('\n') + svc.stderr();
  assert.ok(output.length > 1000);
  assert.ok(!output.includes(KEY), 'the upstream key appears in the daemon output');
});

const health = async (daemon: DaemonProcess) => (await (await fetch(`${daemon.url}/health`)).json()) as Health;

const apiError = (promise: Promise<unknown>) => rejectionOf(promise, OpenAI.APIError);

describe('models', () => {
  test('upstream models are listed as <upstream>/<id>, owned by the upstream', async () => {
    const models = (await client.models.list()).data;
    const ids = models.map((m) => m.id).sort();
    // The built-in embedder of knowledge spaces is listed too, and so is each svc upstream's own
    // (`up/svc-hashed-embed-v2`) once that upstream has been listed.
    assert.ok(ids.includes('svc-hashed-embed-v2'));
    assert.deepEqual(ids.filter((id) => !id.endsWith('svc-hashed-embed-v2')), ['gone/m', 'keyed/m', 'loc/tiny', 'silent/m', 'tools/m', 'up/tiny', 'victim/tiny']);
    assert.equal(models.find((m) => m.id === 'up/tiny')!.owned_by, 'up');
    const one = await client.models.retrieve('up/tiny');
    assert.equal(one.id, 'up/tiny');
    assert.equal(one.owned_by, 'up');
  });
});

describe('passthrough', () => {
  test('chat: the same reply and usage as calling the upstream directly (temperature 0)', async () => {
    const ask = (c: OpenAI, model: string) => c.chat.completions.create({ model, messages: [{ role: 'user', content: 'Say something.' }], max_tokens: 16, temperature: 0 });
    const [through, straight] = [await ask(client, 'up/tiny'), await ask(direct, 'tiny')];
    assert.equal(through.model, 'up/tiny');
    assert.match(through.id, /^chatcmpl-/);
    assert.equal(through.choices[0]!.message.content, straight.choices[0]!.message.content);
    assert.equal(through.choices[0]!.finish_reason, straight.choices[0]!.finish_reason);
    assert.deepEqual(through.usage, straight.usage);
  });

  test('streamed chat: identical token deltas, finish reason and usage (greedy and seeded)', async () => {
    for (const sampling of [{ temperature: 0 }, { temperature: 1, seed: 42 }]) {
      const collect = async (c: OpenAI, model: string) => {
        const stream = await c.chat.completions.create({ model, messages: [{ role: 'user', content: 'Tell me more.' }], max_tokens: 24, ...sampling, stream: true, stream_options: { include_usage: true } });
        const deltas: string[] = [];
        let finish: string | null = null;
        let usage: unknown;
        for await (const chunk of stream) {
          const choice = chunk.choices[0];
          if (choice?.delta.content) deltas.push(choice.delta.content);
          if (choice?.finish_reason) finish = choice.finish_reason;
          if (chunk.usage) usage = chunk.usage;
        }
        return { deltas, finish, usage };
      };
      const through = await collect(client, 'up/tiny');
      const straight = await collect(direct, 'tiny');
      assert.ok(through.deltas.length > 5);
      assert.deepEqual(through, straight);
    }
  });

  test('completions, plain and streamed, match the upstream', async () => {
    const body = { prompt: 'Once upon a time', max_tokens: 12, temperature: 0 };
    const [a, b] = [await client.completions.create({ model: 'loc/tiny', ...body }), await direct.completions.create({ model: 'tiny', ...body })];
    assert.equal(a.choices[0]!.text, b.choices[0]!.text);
    assert.deepEqual(a.usage, b.usage);
    let streamed = '';
    for await (const chunk of await client.completions.create({ model: 'loc/tiny', ...body, stream: true })) streamed += chunk.choices[0]?.text ?? '';
    assert.equal(streamed, b.choices[0]!.text);
  });

  test('embeddings match the upstream\'s (base64 and float)', async () => {
    const [a, b] = [await client.embeddings.create({ model: 'up/tiny', input: ['hello', 'world'] }), await direct.embeddings.create({ model: 'tiny', input: ['hello', 'world'] })];
    assert.equal(a.model, 'up/tiny');
    assert.deepEqual(a.data.map((d) => d.embedding), b.data.map((d) => d.embedding));
    assert.equal(a.usage.prompt_tokens, b.usage.prompt_tokens);
    const floats = await client.embeddings.create({ model: 'up/tiny', input: 'hello', encoding_format: 'float' });
    assert.deepEqual(floats.data[0]!.embedding, b.data[0]!.embedding);
  });
});

describe('tools through an upstream', () => {
  const tools: OpenAI.Chat.ChatCompletionTool[] = [
    { type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } },
    { type: 'function', function: { name: 'get_time', parameters: { type: 'object', properties: {} } } },
  ];

  test('tools and tool_choice reach the upstream; its calls come back in OpenAI\'s shape', async () => {
    const reply = await client.chat.completions.create({ model: 'tools/m', messages: [{ role: 'user', content: 'weather and time?' }], tools, tool_choice: 'required' });
    const sent = tooling.requests.at(-1)!.body as { tools: unknown; tool_choice: unknown; model: string };
    assert.equal(sent.model, 'm');
    assert.deepEqual(sent.tools, tools);
    assert.equal(sent.tool_choice, 'required');
    const choice = reply.choices[0]!;
    assert.equal(choice.finish_reason, 'tool_calls');
    assert.equal(choice.message.content, null);
    assert.deepEqual(choice.message.tool_calls, [
      { id: 'call_w', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } },
      { id: 'call_t', type: 'function', function: { name: 'get_time', arguments: '{}' } },
    ]);
    assert.deepEqual(reply.usage, { prompt_tokens: 12, completion_tokens: 9, total_tokens: 21 });
  });

  test('streamed: tool-call deltas with indexes, then finish_reason tool_calls', async () => {
    const stream = await client.chat.completions.create({ model: 'tools/m', messages: [{ role: 'user', content: 'weather?' }], tools, stream: true });
    const calls = new Map<number, { id?: string; name?: string; arguments: string }>();
    let finish: string | null = null;
    for await (const chunk of stream) {
      for (const delta of chunk.choices[0]?.delta.tool_calls ?? []) {
        const call = calls.get(delta.index) ?? { arguments: '' };
        if (delta.id) call.id = delta.id;
        if (delta.function?.name) call.name = delta.function.name;
        call.arguments += delta.function?.arguments ?? '';
        calls.set(delta.index, call);
      }
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    assert.deepEqual([...calls.entries()], [
      [0, { id: 'call_w', name: 'get_weather', arguments: '{"city":"Oslo"}' }],
      [1, { id: 'call_t', name: 'get_time', arguments: '{}' }],
    ]);
    assert.equal(finish, 'tool_calls');
  });
});

describe('upstream errors', () => {
  test('an upstream 400 keeps its status, code and param; an unknown model is a 404', async () => {
    const tooMany = await apiError(client.chat.completions.create({ model: 'up/tiny', messages: [{ role: 'user', content: 'x' }], max_tokens: 1_000_000 }));
    assert.equal(tooMany.status, 400);
    assert.equal(tooMany.code, 'invalid_value');
    assert.equal(tooMany.param, 'max_tokens');
    assert.match(tooMany.message, /Upstream 'up'/);
    const missing = await apiError(client.chat.completions.create({ model: 'up/nope', messages: [{ role: 'user', content: 'x' }] }));
    assert.equal(missing.status, 404);
    assert.equal(missing.code, 'model_not_found');
    const unknownUpstream = await apiError(client.chat.completions.create({ model: 'nobody/x', messages: [{ role: 'user', content: 'x' }] }));
    assert.equal(unknownUpstream.status, 404);
  });

  test('connection refused → 502 upstream_unavailable', { timeout: 30_000 }, async () => {
    const error = await apiError(client.chat.completions.create({ model: 'gone/m', messages: [{ role: 'user', content: 'x' }] }));
    assert.equal(error.status, 502);
    assert.equal(error.code, 'upstream_unavailable');
    assert.equal((await health(svc)).upstreams.find((u) => u.name === 'gone')!.reachable, false);
  });

  test('an upstream that never answers → 504 upstream_timeout, streamed or not', { timeout: 30_000 }, async () => {
    for (const stream of [false, true]) {
      const error = await apiError(client.chat.completions.create({ model: 'silent/m', messages: [{ role: 'user', content: 'x' }], stream }));
      assert.equal(error.status, 504);
      assert.equal(error.code, 'upstream_timeout');
    }
    // svc gave up on the request: the connection to the silent server was closed.
    await Promise.all(silent.requests.map((r) => r.aborted));
  });

  test('a refused key → 502 naming the upstream; svc sent its key, not the client\'s', async () => {
    const error = await apiError(client.chat.completions.create({ model: 'keyed/m', messages: [{ role: 'user', content: 'x' }] }));
    assert.equal(error.status, 502);
    assert.equal(error.code, 'upstream_auth_failed');
    assert.match(error.message, /SVC_TEST_UPSTREAM_KEY/);
    assert.ok(!error.message.includes(KEY));
    assert.ok(keyed.requests.length >= 2, 'discovery and the chat request');
    for (const request of keyed.requests) assert.equal(request.headers.authorization, `Bearer ${KEY}`);
    assert.ok(!JSON.stringify(await health(svc)).includes(KEY));
    // The failed discovery was logged (without the key: checked over all output in after()).
    assert.ok(svc.logs.some((l) => l.upstream === 'keyed' && l.level === 40 && /credentials/.test(String(l.msg))));
  });
});

describe('streams and connections', () => {
  test('remote upstreams\' live connections are counted in outbound_connections while a stream is open', async () => {
    const counted = async (model: string) => {
      const stream = await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'go' }], max_tokens: 400, temperature: 0, stream: true });
      let during: Health | undefined;
      for await (const chunk of stream) {
        if (during === undefined && chunk.choices[0]?.delta.content) during = await health(svc);
      }
      return during!;
    };
    const remote = await counted('up/tiny');
    const up = remote.upstreams.find((u) => u.name === 'up')!;
    assert.equal(up.kind, 'remote');
    assert.ok(up.connections >= 1);
    assert.equal(up.active, 1);
    assert.ok(remote.outbound_connections >= 1);
    const local = await counted('loc/tiny');
    const loc = local.upstreams.find((u) => u.name === 'loc')!;
    assert.equal(loc.kind, 'local');
    assert.ok(loc.connections >= 1);
    // Only remote upstreams count: the loopback upstream's connection is not outbound.
    assert.equal(local.outbound_connections, local.upstreams.filter((u) => u.kind === 'remote').reduce((n, u) => n + u.connections, 0));
  });

  test('a client that disconnects stops the upstream\'s generation', { timeout: 30_000 }, async () => {
    const controller = new AbortController();
    const stream = await client.chat.completions.create(
      { model: 'up/tiny', messages: [{ role: 'user', content: 'keep going' }], max_tokens: 1500, temperature: 1, seed: 1, stream: true },
      { signal: controller.signal },
    );
    let received = 0;
    try {
      for await (const chunk of stream) {
        if (chunk.choices[0]?.delta.content) {
          received++;
          controller.abort();
        }
      }
    } catch {
      // Some client versions raise on abort, others end the stream: either way the client left.
    }
    assert.equal(received, 1);
    const idle = await waitForHealth<Health>(upstream.url, (h) => h.model.active === 0);
    assert.equal(idle.model.active, 0);
    // The upstream logged the request as abandoned by its client (svc), not as finished.
    const line = await waitFor(() => upstream.logs.find((l) => l.msg === 'request' && l.finish === 'client_disconnected'));
    assert.equal(line.status, 499);
  });

  test('an upstream killed mid-stream: a clean error for the client, no hang, svc keeps serving', { timeout: 30_000 }, async () => {
    const stream = await client.chat.completions.create({ model: 'victim/tiny', messages: [{ role: 'user', content: 'go' }], max_tokens: 1500, temperature: 1, seed: 1, stream: true });
    let killed = false;
    const error = await apiError((async () => {
      for await (const chunk of stream) {
        if (!killed && chunk.choices[0]?.delta.content) {
          killed = true;
          victim.child.kill('SIGKILL');
        }
      }
    })());
    assert.ok(killed);
    assert.match(error.message, /Upstream 'victim'/);
    assert.equal((await health(svc)).status, 'ok');
    const after = await apiError(client.chat.completions.create({ model: 'victim/tiny', messages: [{ role: 'user', content: 'x' }] }));
    assert.equal(after.status, 502);
    assert.equal(after.code, 'upstream_unavailable');
    const still = await client.chat.completions.create({ model: 'up/tiny', messages: [{ role: 'user', content: 'x' }], max_tokens: 4 });
    assert.equal(still.choices[0]!.finish_reason, 'length');
  });
});

async function waitFor<T>(find: () => T | undefined): Promise<T> {
  for (let i = 0; i < 200; i++) {
    const found = find();
    if (found !== undefined) return found;
    await new Promise((r) => setTimeout(r, 25));
  }
  assert.fail('timed out waiting');
}
