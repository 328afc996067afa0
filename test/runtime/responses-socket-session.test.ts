/**
 * The WebSocket session's lifecycle rules, in process with scripted models (what a real model
 * cannot be made to do on cue): disconnects abort the generation, turns run one at a time,
 * the pending queue and the connection's lifetime are bounded, shutdown ends a turn with
 * `response.failed`, and an engine failure is an error envelope before the response opened and
 * `response.failed` after.
 */
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import Fastify, { type FastifyInstance } from 'fastify';
import WebSocket from 'ws';
import type { ChatMessage, ChatOptions, GenerateResult, LanguageModel, ModelRegistry } from '../../src/inference/language-model.ts';
import { ApiError } from '../../src/shared/api-error.ts';
import { responsesSocketRoute } from '../../src/runtime/responses-socket-route.ts';
import { MAX_PENDING_TURNS } from '../../src/runtime/responses-socket-session.ts';
import { ResponsesSocketClient, type SocketEvent } from '../helpers/responses-socket-client.ts';

const usage = { promptTokens: 3, completionTokens: 2 };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Models by behaviour: `quick` answers at once, `slow` streams until aborted, `fail-*` throw. */
class ScriptedModels implements ModelRegistry {
  running = 0;
  maxRunning = 0;
  aborts = 0;
  calls: ChatMessage[][] = [];
  list() {
    return [];
  }
  model(id: string): LanguageModel | undefined {
    const chat = async (messages: readonly ChatMessage[], options: ChatOptions): Promise<GenerateResult> => {
      this.calls.push([...messages]);
      this.running++;
      this.maxRunning = Math.max(this.maxRunning, this.running);
      try {
        return await this.#run(id, options);
      } finally {
        this.running--;
      }
    };
    const refuse = () => Promise.reject(new Error('not used'));
    return ['quick', 'slow', 'steady', 'fail-early', 'fail-late'].includes(id) ? { id, chat, complete: refuse, embed: refuse } : undefined;
  }
  async #run(id: string, options: ChatOptions): Promise<GenerateResult> {
    const signal = options.signal!;
    if (id === 'fail-early') throw ApiError.invalidRequest('The prompt is longer than the context.', 'messages', 'context_length_exceeded');
    options.onPart?.({ type: 'text-delta', text: 'a' });
    if (id === 'fail-late') throw new Error('engine crashed');
    const parts = id === 'quick' ? 1 : id === 'steady' ? 10 : Infinity;
    for (let i = 1; i < parts; i++) {
      await sleep(20);
      if (signal.aborted) {
        this.aborts++;
        return { text: 'a', toolCalls: [], finishReason: 'abort', usage };
      }
      options.onPart?.({ type: 'text-delta', text: 'b' });
    }
    return { text: 'ab', toolCalls: [], finishReason: 'stop', usage };
  }
}

let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

async function serve(models: ModelRegistry, extra: { connectionLimitMs?: number; shutdownSignal?: AbortSignal; maxConnections?: number } = {}): Promise<string> {
  app = Fastify();
  await app.register(responsesSocketRoute, {
    prefix: '/v1', models, shutdownSignal: extra.shutdownSignal ?? new AbortController().signal, maxMessageBytes: 1 << 20, connectionLimitMs: extra.connectionLimitMs, maxConnections: extra.maxConnections,
  });
  return app.listen({ host: '127.0.0.1', port: 0 });
}

const create = (model: string, input = 'hi'): string => JSON.stringify({ type: 'response.create', model, input });

async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 250 && !check(); i++) await sleep(20);
  assert.ok(check(), what);
}

describe('WebSocket session', () => {
  it('refuses an upgrade beyond the connection cap with 503 before upgrading, and takes one again once a connection closes', async () => {
    const base = await serve(new ScriptedModels(), { maxConnections: 2 });
    const open = [await ResponsesSocketClient.open(base), await ResponsesSocketClient.open(base)];
    const refused = await new Promise<{ status: number | undefined; body: string }>((resolve, reject) => {
      const socket = new WebSocket(`${base.replace(/^http/, 'ws')}/v1/responses`);
      socket.once('open', () => reject(new Error('a third connection was accepted')));
      socket.once('unexpected-response', (_request, response) => {
        let body = '';
        response.on('data', (chunk: Buffer) => { body += chunk.toString(); });
        response.on('end', () => resolve({ status: response.statusCode, body }));
      });
      socket.once('error', () => {});
    });
    assert.equal(refused.status, 503);
    // This bare app has Fastify's own error reply; the daemon's handler puts the same ApiError in the envelope.
    assert.match(refused.body, /2 WebSocket connections are open, the most this daemon keeps at once/);
    open[0]!.close();
    await until(() => open[0]!.socket.readyState === open[0]!.socket.CLOSED, 'the first connection closed');
    await sleep(50);
    const again = await ResponsesSocketClient.open(base);
    again.close();
    open[1]!.close();
  });

  it('a disconnect mid-generation aborts the generation', async () => {
    const models = new ScriptedModels();
    const client = await ResponsesSocketClient.open(await serve(models));
    client.socket.send(create('slow'));
    assert.equal((await client.next())!.type, 'response.created');
    client.close();
    await until(() => models.aborts === 1 && models.running === 0, 'the generation was aborted');
  });

  it('answers several response.create messages one at a time, in order, each turn whole', async () => {
    const models = new ScriptedModels();
    const client = await ResponsesSocketClient.open(await serve(models));
    try {
      for (const input of ['one', 'two', 'three']) client.socket.send(create('steady', input));
      const ids: string[] = [];
      for (let turn = 0; turn < 3; turn++) {
        const events = await client.untilTerminal();
        assert.equal(events.at(-1)!.type, 'response.completed');
        const id = (events[0]!.response as { id: string }).id;
        // Every event of the turn belongs to its response.
        for (const e of events) if (e.response !== undefined) assert.equal((e.response as { id: string }).id, id);
        ids.push(id);
      }
      assert.equal(new Set(ids).size, 3);
      assert.equal(models.maxRunning, 1);
      assert.deepEqual(models.calls.map((c) => c.at(-1)!.content), ['one', 'two', 'three']);
    } finally {
      client.close();
    }
  });

  it(`refuses a response.create beyond ${MAX_PENDING_TURNS} waiting ones with 429`, async () => {
    const models = new ScriptedModels();
    const client = await ResponsesSocketClient.open(await serve(models));
    try {
      client.socket.send(create('slow'));
      assert.equal((await client.next())!.type, 'response.created');
      for (let i = 0; i <= MAX_PENDING_TURNS; i++) client.socket.send(create('quick'));
      let refused: SocketEvent | undefined;
      while (refused === undefined) {
        const event = (await client.next())!;
        if (event.type === 'error') refused = event;
      }
      assert.equal(refused.status, 429);
      assert.equal((refused.error as { code: string }).code, 'too_many_pending_turns');
    } finally {
      client.close();
    }
  });

  it('ends a connection at its time limit: an idle one at once, a busy one after its turn', async () => {
    const models = new ScriptedModels();
    const url = await serve(models, { connectionLimitMs: 100 });
    const idle = await ResponsesSocketClient.open(url);
    const limit = (await idle.next())!;
    assert.equal(limit.type, 'error');
    assert.equal((limit.error as { code: string }).code, 'websocket_connection_limit_reached');
    assert.equal((await idle.closed).code, 1000);

    const busy = await ResponsesSocketClient.open(url);
    busy.socket.send(create('steady'));
    const events = await busy.untilTerminal();
    assert.equal(events.at(-1)!.type, 'response.completed');
    assert.equal(((await busy.next())!.error as { code: string }).code, 'websocket_connection_limit_reached');
    assert.equal((await busy.closed).code, 1000);
  });

  it('shutdown fails the turn in progress with response.failed and closes with 1001', async () => {
    const models = new ScriptedModels();
    const shutdown = new AbortController();
    const client = await ResponsesSocketClient.open(await serve(models, { shutdownSignal: shutdown.signal }));
    client.socket.send(create('slow'));
    assert.equal((await client.next())!.type, 'response.created');
    shutdown.abort();
    const events = await client.untilTerminal();
    const failed = events.at(-1)!;
    assert.equal(failed.type, 'response.failed');
    assert.equal((failed.response as { error: { code: string } }).error.code, 'server_shutting_down');
    assert.equal((await client.closed).code, 1001);
  });

  it('an engine failure is the error envelope before the response opened, response.failed alone after', async () => {
    const models = new ScriptedModels();
    const client = await ResponsesSocketClient.open(await serve(models));
    try {
      const early = await client.turn(create('fail-early'));
      assert.deepEqual(early.map((e) => e.type), ['error']);
      assert.deepEqual(early[0], {
        type: 'error', status: 400,
        error: { type: 'invalid_request_error', code: 'context_length_exceeded', message: 'The prompt is longer than the context.', param: 'input' },
      });
      const late = await client.turn(create('fail-late'));
      assert.deepEqual(late.map((e) => e.type).slice(0, 2), ['response.created', 'response.in_progress']);
      assert.equal(late.at(-1)!.type, 'response.failed');
      assert.equal(late.filter((e) => e.type === 'error').length, 0);
      assert.equal((late.at(-1)!.response as { error: { code: string } }).error.code, 'internal_error');
      // The connection goes on.
      assert.equal((await client.turn(create('quick'))).at(-1)!.type, 'response.completed');
    } finally {
      client.close();
    }
  });
});
