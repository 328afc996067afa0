/**
 * Stateful Responses against a real `svc serve` (the fixture model's ending variant) through the
 * official `openai` client: `store` (true by default), `previous_response_id` over HTTP and
 * WebSocket, retrieve, delete, input items, concurrent continuations, and a restart on the same
 * data dir.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import { endingModelPath, startServerProcess, type DaemonProcess } from '../helpers/daemon-process.ts';
import { ResponsesSocketClient } from '../helpers/responses-socket-client.ts';

const root = mkdtempSync(join(tmpdir(), 'svc-stored-responses-'));
const dataDir = join(root, 'data');
const serve = (args: string[] = []): Promise<DaemonProcess> =>
  startServerProcess(['serve', '--port', '0', '--data-dir', dataDir, '--model', `tiny=${endingModelPath()}`, ...args]);

let daemon: DaemonProcess;
let client: OpenAI;
const connect = (d: DaemonProcess) => new OpenAI({ baseURL: `${d.url}/v1`, apiKey: 'none', maxRetries: 0 });

before(async () => {
  daemon = await serve();
  client = connect(daemon);
});
after(async () => {
  await daemon.stop();
  rmSync(root, { recursive: true, force: true });
});

/** `store` is in the Response object OpenAI sends, though the SDK's type leaves it out. */
const storeOf = (response: object): unknown => (response as { store?: unknown }).store;

const ask = (fields: Partial<OpenAI.Responses.ResponseCreateParamsNonStreaming>) =>
  client.responses.create({ model: 'tiny', max_output_tokens: 16, input: 'Say hi.', ...fields } as OpenAI.Responses.ResponseCreateParamsNonStreaming);

async function notFound(promise: Promise<unknown>): Promise<void> {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof OpenAI.NotFoundError, String(error));
    assert.match(error.message, /No response with id/);
    return true;
  });
}

describe('stored responses', () => {
  it('stores by default (as OpenAI): retrieve answers the same response; the file is private', async () => {
    const created = await ask({ input: 'Remember the word apricot.' });
    assert.equal(storeOf(created), true);
    const retrieved = await client.responses.retrieve(created.id);
    assert.deepEqual(retrieved, created);
    const file = join(dataDir, 'responses', 'responses.db');
    assert.equal(statSync(file).mode & 0o777, 0o600);
    assert.equal(statSync(join(dataDir, 'responses')).mode & 0o777, 0o700);
  });

  it('store: false is not kept', async () => {
    const created = await ask({ store: false });
    assert.equal(storeOf(created), false);
    await notFound(client.responses.retrieve(created.id));
  });

  it('previous_response_id continues a stored response: its turns are in the prompt, and a continuation continues', async () => {
    const first = await ask({ input: 'The code word is apricot. '.repeat(8), instructions: 'Be brief.' });
    const alone = await ask({ input: 'What is the code word?', max_output_tokens: 1 });
    const next = await ask({ previous_response_id: first.id, input: 'What is the code word?', max_output_tokens: 1 });
    assert.equal(next.previous_response_id, first.id);
    assert.ok(next.usage!.input_tokens > alone.usage!.input_tokens + 40, `${next.usage!.input_tokens} vs ${alone.usage!.input_tokens}`);
    const third = await ask({ previous_response_id: next.id, input: 'Again?', max_output_tokens: 1 });
    assert.ok(third.usage!.input_tokens > next.usage!.input_tokens);
  });

  it('a streamed response is stored before its last event, and continues as well', async () => {
    const stream = await client.responses.create({ model: 'tiny', input: 'Stream something.', max_output_tokens: 8, stream: true });
    let id: string | undefined;
    for await (const event of stream) if (event.type === 'response.completed' || event.type === 'response.incomplete') id = event.response.id;
    assert.ok(id !== undefined);
    assert.equal((await client.responses.retrieve(id)).id, id);
  });

  it('lists input items as OpenAI does: desc by default, order, limit, after', async () => {
    const created = await ask({
      input: [
        { role: 'user', content: 'one' },
        { role: 'assistant', content: 'two' },
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'three' }] },
      ],
    });
    const page = await client.responses.inputItems.list(created.id);
    assert.deepEqual(page.data.map((item) => (item as { content: { text: string }[] }).content[0]!.text), ['three', 'two', 'one']);
    assert.ok(page.data.every((item) => typeof item.id === 'string' && item.id.startsWith('msg_')));
    const first = await client.responses.inputItems.list(created.id, { order: 'asc', limit: 2 });
    assert.equal(first.data.length, 2);
    assert.equal(first.has_more, true);
    const rest = await client.responses.inputItems.list(created.id, { order: 'asc', limit: 2, after: first.data[1]!.id! });
    assert.deepEqual(rest.data.map((item) => (item as { content: { text: string }[] }).content[0]!.text), ['three']);
    assert.equal(rest.has_more, false);
    const all: string[] = [];
    for await (const item of client.responses.inputItems.list(created.id, { order: 'asc', limit: 1 })) all.push(item.id!);
    assert.equal(all.length, 3, 'the SDK pages through with after');
    await notFound(client.responses.inputItems.list('resp_unknown'));
  });

  it('delete removes a response; an unknown id is 404 in the envelope; a chain with a deleted link is previous_response_not_found', async () => {
    const first = await ask({});
    const second = await ask({ previous_response_id: first.id, input: 'More.' });
    await client.responses.delete(first.id);
    await notFound(client.responses.retrieve(first.id));
    await notFound(client.responses.delete(first.id));
    await notFound(client.responses.retrieve('resp_does_not_exist'));
    const res = await fetch(`${daemon.url}/v1/responses/resp_nope`);
    assert.equal(res.status, 404);
    assert.deepEqual(Object.keys(((await res.json()) as { error: object }).error).sort(), ['code', 'message', 'param', 'type']);
    for (const id of [first.id, second.id]) {
      await assert.rejects(ask({ previous_response_id: id, input: 'Continue.' }), (error: unknown) => {
        assert.ok(error instanceof OpenAI.BadRequestError, String(error));
        assert.equal(error.code, 'previous_response_not_found');
        assert.equal(error.param, 'previous_response_id');
        return true;
      });
    }
  });

  it('concurrent continuations of one response each answer and are stored apart', async () => {
    const first = await ask({});
    const branches = await Promise.all([1, 2, 3].map((n) => ask({ previous_response_id: first.id, input: `Branch ${n}.` })));
    assert.equal(new Set(branches.map((b) => b.id)).size, 3);
    for (const branch of branches) assert.equal((await client.responses.retrieve(branch.id)).previous_response_id, first.id);
  });

  it('background stays refused', async () => {
    await assert.rejects(ask({ background: true }), (error: unknown) => error instanceof OpenAI.BadRequestError && error.param === 'background');
  });

  it('WebSocket mode finds a response stored over HTTP, and stores its own unless store: false', async () => {
    const stored = await ask({ input: 'The code word is apricot.' });
    const socket = await ResponsesSocketClient.open(daemon.url);
    try {
      const events = await socket.turn({ type: 'response.create', model: 'tiny', max_output_tokens: 4, previous_response_id: stored.id, input: 'What is it?' });
      const done = events.at(-1)!.response as { id: string; store: boolean; previous_response_id: string };
      assert.deepEqual([done.store, done.previous_response_id], [true, stored.id]);
      assert.equal((await client.responses.retrieve(done.id)).id, done.id, 'the WebSocket turn is stored too');
      const unstored = (await socket.turn({ type: 'response.create', model: 'tiny', max_output_tokens: 4, store: false, input: 'x' })).at(-1)!.response as { id: string; store: boolean };
      assert.equal(unstored.store, false);
      await notFound(client.responses.retrieve(unstored.id));
      // store: false is still remembered by its own connection.
      const next = (await socket.turn({ type: 'response.create', model: 'tiny', max_output_tokens: 4, store: false, previous_response_id: unstored.id, input: 'y' })).at(-1)!;
      assert.ok(next.type === 'response.completed' || next.type === 'response.incomplete', next.type);
    } finally {
      socket.close();
    }
  });

  it('survives a restart on the same data dir', async () => {
    const kept = await ask({ input: 'Keep me.' });
    await daemon.stop();
    daemon = await serve();
    client = connect(daemon);
    assert.deepEqual(await client.responses.retrieve(kept.id), kept);
    const next = await ask({ previous_response_id: kept.id, input: 'Still there?' });
    assert.equal(next.previous_response_id, kept.id);
  });

  it('--responses-max-size 0 keeps none: store: true and previous_response_id are refused naming the flag', async () => {
    await daemon.stop();
    daemon = await serve(['--responses-max-size', '0']);
    client = connect(daemon);
    const plain = await ask({});
    assert.equal(storeOf(plain), false);
    for (const fields of [{ store: true }, { previous_response_id: plain.id }]) {
      await assert.rejects(ask(fields), (error: unknown) => error instanceof OpenAI.BadRequestError && /--responses-max-size 0/.test(error.message));
    }
    await notFound(client.responses.retrieve(plain.id));
  });
});
