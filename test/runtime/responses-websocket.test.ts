/**
 * Open Responses' WebSocket mode of `/v1/responses` and `POST /v1/responses/compact` against a
 * real `svc serve` with the fixture model's ending variant (replies end on their own), through
 * a real WebSocket client (the `ws` package).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import WebSocket from 'ws';
import { endingModelPath, startDaemon, type DaemonProcess } from '../helpers/daemon-process.ts';
import { refusedUpgrade, ResponsesSocketClient, type SocketEvent } from '../helpers/responses-socket-client.ts';

const BODY_LIMIT = 64 * 1024;

let daemon: DaemonProcess;
before(async () => {
  daemon = await startDaemon({ withModel: false, args: ['--model', `tiny=${endingModelPath()}`, '--body-limit', String(BODY_LIMIT)] });
});
after(async () => {
  await daemon.stop();
});

interface ResponseObject {
  id: string;
  status: string;
  previous_response_id: string | null;
  store: boolean;
  output: { type: string }[];
  usage: { input_tokens: number; output_tokens: number };
}

const create = (fields: object): object => ({ type: 'response.create', model: 'tiny', store: false, max_output_tokens: 24, ...fields });

/** The response a turn ended with: completed, or incomplete where the token cap cut the noise short. */
function completed(events: SocketEvent[]): ResponseObject {
  const last = events.at(-1)!;
  assert.ok(last.type === 'response.completed' || last.type === 'response.incomplete', `turn ended with ${JSON.stringify(last).slice(0, 300)}`);
  return last.response as ResponseObject;
}

function errorOf(events: SocketEvent[]): { status: number; error: { code: string; param: string | null; message: string } } {
  assert.equal(events.length, 1, `one error message, got ${events.map((e) => e.type).join(', ')}`);
  assert.equal(events[0]!.type, 'error');
  return events[0] as unknown as { status: number; error: { code: string; param: string | null; message: string } };
}

describe('WebSocket mode of /v1/responses', () => {
  it('streams the HTTP event sequence of a response, numbered from 0, ending with one terminal event', async () => {
    const client = await ResponsesSocketClient.open(daemon.url);
    try {
      const events = await client.turn(create({ input: 'Count from 1 to 3.' }));
      assert.deepEqual(events.slice(0, 2).map((e) => e.type), ['response.created', 'response.in_progress']);
      assert.deepEqual(events.map((e) => e.sequence_number), events.map((_, i) => i));
      const response = completed(events);
      assert.equal(response.store, false);
      assert.equal(response.previous_response_id, null);
      assert.equal(response.output[0]!.type, 'message');
      // Nothing else arrives for the turn: the next message is the next turn's.
      const second = await client.turn(create({ input: 'Again.' }));
      assert.equal(second[0]!.type, 'response.created');
      assert.notEqual(completed(second).id, response.id);
    } finally {
      client.close();
    }
  });

  it('continues a response on the same connection with previous_response_id: the earlier turns are in the prompt', async () => {
    const client = await ResponsesSocketClient.open(daemon.url);
    try {
      const first = completed(await client.turn(create({ input: 'Remember the code word: cobalt.' })));
      const alone = completed(await client.turn(create({ input: 'What is the code word?' })));
      const next = completed(await client.turn(create({ previous_response_id: first.id, input: 'What is the code word?' })));
      assert.equal(next.previous_response_id, first.id);
      // The continuation's prompt holds the first turn's input and reply on top of its own input
      // (not compared with the reply's generated token count: generated noise may re-tokenize shorter).
      assert.ok(next.usage.input_tokens > Math.max(first.usage.input_tokens, alone.usage.input_tokens) + 2,
        `continuation prompt ${next.usage.input_tokens} tokens; first ${first.usage.input_tokens}, alone ${alone.usage.input_tokens}`);
      // A chain: the continuation can be continued in turn.
      const third = completed(await client.turn(create({ previous_response_id: next.id, input: 'And once more?' })));
      assert.ok(third.usage.input_tokens > next.usage.input_tokens);
    } finally {
      client.close();
    }
  });

  it('another connection does not know the response (previous_response_not_found), and a new chain starts', async () => {
    const first = await ResponsesSocketClient.open(daemon.url);
    const id = completed(await first.turn(create({ input: 'Remember: copper.' }))).id;
    first.close();
    const second = await ResponsesSocketClient.open(daemon.url);
    try {
      const refused = errorOf(await second.turn(create({ previous_response_id: id, input: 'Continue.' })));
      assert.equal(refused.status, 400);
      assert.equal(refused.error.code, 'previous_response_not_found');
      assert.equal(refused.error.param, 'previous_response_id');
      assert.match(refused.error.message, new RegExp(id));
      completed(await second.turn(create({ input: 'Start again.' })));
    } finally {
      second.close();
    }
  });

  it('a failed continuation forgets the response it continued', async () => {
    const client = await ResponsesSocketClient.open(daemon.url);
    try {
      const id = completed(await client.turn(create({ input: 'Remember: ember.' }))).id;
      const failed = errorOf(await client.turn(create({ previous_response_id: id, input: [{ type: 'function_call_output', call_id: 'call_missing', output: 'x' }] })));
      assert.equal(failed.status, 400);
      assert.equal(failed.error.param, 'input[0].call_id');
      assert.match(failed.error.message, /previous response/);
      assert.equal(errorOf(await client.turn(create({ previous_response_id: id, input: 'Retry.' }))).error.code, 'previous_response_not_found');
    } finally {
      client.close();
    }
  });

  it('answers malformed messages with the error envelope and keeps the connection usable', async () => {
    const client = await ResponsesSocketClient.open(daemon.url);
    try {
      const cases: [object | string, string, string | null][] = [
        ['{"type": "response.create", ', 'invalid_json', null],
        ['[1, 2]', 'invalid_request', 'type'],
        [{ type: 'response.cancel' }, 'unknown_event_type', 'type'],
        [{ model: 'tiny', input: 'no type' }, 'unknown_event_type', 'type'],
        [create({ input: 'x', stream: true }), 'invalid_request', 'stream'],
        [create({ input: 'x', background: false }), 'invalid_request', 'background'],
        [create({ input: 'x', conversation: 'conv_1' }), 'unsupported_parameter', 'conversation'],
        [create({ input: 'x', temperature: 'hot' }), 'invalid_request', 'temperature'],
        [create({ model: 'no-such-model', input: 'x' }), 'model_not_found', 'model'],
      ];
      for (const [message, code, param] of cases) {
        const error = errorOf(await client.turn(message));
        assert.equal(error.error.code, code, `${JSON.stringify(message)}: ${JSON.stringify(error)}`);
        assert.equal(error.error.param, param, JSON.stringify(message));
        assert.ok(error.status === 400 || error.status === 404, `${error.status}`);
      }
      client.socket.send(Buffer.from('{"type":"response.create"}'), { binary: true });
      assert.equal(errorOf(await client.untilTerminal()).error.code, 'invalid_message');
      completed(await client.turn(create({ input: 'Still here?' })));
    } finally {
      client.close();
    }
  });

  it('closes a connection whose message is over the body limit (1009), and the daemon goes on', async () => {
    const client = await ResponsesSocketClient.open(daemon.url);
    client.socket.on('error', () => {});
    client.socket.send(JSON.stringify(create({ input: 'x'.repeat(BODY_LIMIT + 1) })));
    assert.equal((await client.closed).code, 1009);
    const again = await ResponsesSocketClient.open(daemon.url);
    try {
      completed(await again.turn(create({ input: 'Fine?' })));
    } finally {
      again.close();
    }
  });

  it('refuses an upgrade from a foreign Origin or Host with 403 in the envelope, as any request', async () => {
    for (const headers of [{ Origin: 'https://evil.example' }, { Host: 'evil.example' }, { Origin: 'null' }] as Record<string, string>[]) {
      const refused = await refusedUpgrade(daemon.url, headers);
      assert.equal(refused.status, 403, JSON.stringify(headers));
      assert.equal((JSON.parse(refused.body) as { error: { code: string } }).error.code, 'forbidden_host');
    }
    // A loopback origin is a local app: allowed.
    const local = await ResponsesSocketClient.open(daemon.url, { Origin: 'http://localhost:3000' });
    local.close();
  });

  it('tells a plain GET to upgrade (426 in the envelope)', async () => {
    const res = await fetch(`${daemon.url}/v1/responses`);
    assert.equal(res.status, 426);
    assert.equal(res.headers.get('upgrade'), 'websocket');
    assert.equal(((await res.json()) as { error: { code: string } }).error.code, 'upgrade_required');
  });

  it('ends an upgrade to a path with no WebSocket route with its HTTP answer and closes the socket', async () => {
    const status = await new Promise<number>((resolve, reject) => {
      const socket = new WebSocket(`${daemon.url.replace(/^http/, 'ws')}/v1/chat/completions`);
      socket.once('open', () => reject(new Error('upgraded')));
      socket.once('unexpected-response', (_req, res) => {
        res.resume();
        res.once('end', () => resolve(res.statusCode ?? 0));
      });
      socket.once('error', () => {});
    });
    assert.ok(status >= 400 && status < 500, `${status}`);
  });
});

describe('POST /v1/responses/compact', () => {
  const conversation = [
    { type: 'message', role: 'user', content: 'We launch on Tuesday.' },
    { type: 'message', role: 'assistant', content: 'Understood: Tuesday.' },
    { type: 'function_call', call_id: 'c1', name: 'calendar', arguments: '{}' },
    { type: 'function_call_output', call_id: 'c1', output: 'booked' },
    { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Notify support first.' }] },
  ];
  const post = (path: string, body: object): Promise<Response> =>
    fetch(`${daemon.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

  it('keeps the user messages verbatim and replaces the rest with one compaction item, which a new response takes as input', async () => {
    const res = await post('/v1/responses/compact', { model: 'tiny', instructions: 'Be brief.', input: conversation });
    assert.equal(res.status, 200);
    const compacted = (await res.json()) as { object: string; id: string; output: { type: string; role?: string; content?: { text: string }[]; encrypted_content?: string }[]; usage: { output_tokens: number } };
    assert.equal(compacted.object, 'response.compaction');
    assert.deepEqual(compacted.output.map((i) => i.type), ['message', 'message', 'compaction']);
    assert.deepEqual(compacted.output.slice(0, 2).map((i) => [i.role, i.content![0]!.text]), [['user', 'We launch on Tuesday.'], ['user', 'Notify support first.']]);
    assert.match(compacted.output[2]!.encrypted_content!, /^svc-compaction-v1:/);
    assert.ok(compacted.usage.output_tokens > 0);

    const next = await post('/v1/responses', { model: 'tiny', max_output_tokens: 8, input: [...compacted.output, { role: 'user', content: 'Continue.' }] });
    assert.equal(next.status, 200, await next.clone().text());
    const client = await ResponsesSocketClient.open(daemon.url);
    try {
      completed(await client.turn(create({ input: [...compacted.output, { role: 'user', content: 'Continue.' }] })));
    } finally {
      client.close();
    }
  });

  it('refuses a compaction item svc did not write, a missing model, an empty input and previous_response_id over HTTP', async () => {
    const forged = await post('/v1/responses', { model: 'tiny', input: [{ type: 'compaction', encrypted_content: 'gAAAA-openai-ciphertext' }] });
    assert.equal(forged.status, 400);
    assert.deepEqual(((await forged.json()) as { error: { code: string; param: string } }).error, {
      code: 'invalid_compaction', param: 'input[0].encrypted_content', type: 'invalid_request_error',
      message: 'input[0].encrypted_content is not a compaction svc wrote: send the compaction item POST /v1/responses/compact returned, unchanged.',
    });
    for (const [body, code, param] of [
      [{ input: conversation }, 'invalid_request', 'model'],
      [{ model: 'tiny', input: [] }, 'invalid_request', 'input'],
      [{ model: 'tiny' }, 'invalid_request', 'input'],
      [{ model: 'tiny', previous_response_id: 'resp_1', input: 'x' }, 'previous_response_not_found', 'previous_response_id'],
      [{ model: 'tiny', input: 'x', tools: [] }, 'invalid_request', 'tools'],
    ] as const) {
      const res = await post('/v1/responses/compact', body);
      const error = ((await res.json()) as { error: { code: string; param: string | null } }).error;
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.deepEqual([error.code, error.param], [code, param], `${JSON.stringify(body)} → ${JSON.stringify(error)}`);
    }
  });
});
