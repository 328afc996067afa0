/**
 * The structured-output guarantee for upstream models: what svc checks (upstreamExpectation),
 * and, as a property over seeds, that every reply a scripted OpenAI-protocol upstream sends —
 * valid, truncated or schema-breaking JSON, a missing forced call, a reply the upstream cut
 * itself; streamed or whole, in random chunks — either keeps the guarantee (`stop`/`tool_calls`
 * ⇒ parses and validates) or is refused with a 502 `upstream_structured_output_invalid`, never
 * passed on as a normal finish. In process, on OpenAIUpstream (the HTTP paths with the `openai`
 * client: test/runtime/upstream-structured-output.test.ts).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { z } from 'zod';
import { upstreamExpectation } from '../../src/inference/check-upstream-reply.ts';
import type { ChatOptions, GenerateResult, GenerationPart } from '../../src/inference/language-model.ts';
import type { OpenAIUpstream } from '../../src/inference/openai-upstream.ts';
import { ApiError } from '../../src/shared/api-error.ts';
import { startUpstreamClient, type ScriptedUpstream } from '../helpers/scripted-upstream.ts';
import { prng } from '../helpers/tiny-gguf.ts';
import { SHORT_ORDER, shortOrderCheck } from '../helpers/structured-output-seeds.ts';

const SEEDS = 1000;

const anyObject = z.record(z.string(), z.unknown());

describe('upstreamExpectation: what svc checks in an upstream\'s reply', () => {
  const tool = (name: string, strict?: boolean) => ({ name, parameters: SHORT_ORDER, ...(strict !== undefined ? { strict } : {}) });

  test('free text, and non-strict tools under auto, are not checked', () => {
    assert.equal(upstreamExpectation({}), undefined);
    assert.equal(upstreamExpectation({ responseFormat: { type: 'text' } }), undefined);
    assert.equal(upstreamExpectation({ tools: [tool('a'), tool('b', false)] }), undefined);
    assert.equal(upstreamExpectation({ tools: [tool('a', true)], toolChoice: { type: 'none' } }), undefined);
  });

  test('json_object and json_schema check the reply text', () => {
    const object = upstreamExpectation({ responseFormat: { type: 'json_object' } })!;
    assert.equal(object.text!({}), undefined);
    assert.match(object.text!([1])!, /not an object/);
    const schema = upstreamExpectation({ responseFormat: { type: 'json_schema', name: 'o', schema: SHORT_ORDER, strict: false } })!;
    assert.equal(schema.text!({ kind: 'a', n: 1, lines: [], tag: null }), undefined);
    assert.match(schema.text!({ kind: 'c', n: 1, lines: [], tag: null })!, /\/kind/);
    assert.equal(schema.tools, undefined);
  });

  test('under auto, strict tools are checked and the others pass unchecked', () => {
    const expected = upstreamExpectation({ tools: [tool('s', true), tool('loose')] })!;
    assert.equal(expected.callForced, false);
    assert.equal(typeof expected.tools!.get('s'), 'function');
    assert.equal(expected.tools!.get('loose'), null);
  });

  test('a forced call checks every offered tool; a named one offers only that tool', () => {
    const required = upstreamExpectation({ tools: [tool('a'), tool('b')], toolChoice: { type: 'required' } })!;
    assert.equal(required.callForced, true);
    assert.deepEqual([...required.tools!.keys()], ['a', 'b']);
    assert.ok([...required.tools!.values()].every((check) => typeof check === 'function'));
    const named = upstreamExpectation({ tools: [tool('a'), tool('b')], toolChoice: { type: 'function', name: 'b' } })!;
    assert.deepEqual([...named.tools!.keys()], ['b']);
    // A tool without parameters takes any object.
    const bare = upstreamExpectation({ tools: [{ name: 'ping' }], toolChoice: { type: 'required' } })!;
    assert.equal(bare.tools!.get('ping')!({}), undefined);
    assert.match(bare.tools!.get('ping')!('x')!, /not an object/);
  });
});

type Rand = () => number;
const pick = <T>(rand: Rand, items: readonly T[]): T => items[Math.floor(rand() * items.length)]!;

function validOrder(rand: Rand): Record<string, unknown> {
  return {
    kind: pick(rand, ['a', 'b']),
    n: Math.floor(rand() * 2000) - 1000,
    lines: Array.from({ length: Math.floor(rand() * 3) }, () => ({ ok: rand() < 0.5 })),
    tag: rand() < 0.3 ? null : pick(rand, ['', 'x', 'ab', 'é"\\', '\u{1F600}']),
  };
}

/** A complete value that breaks SHORT_ORDER in one place (each would pass a json_object check). */
function breakingOrder(rand: Rand): Record<string, unknown> {
  const order = validOrder(rand);
  const breaks: (() => void)[] = [
    () => (order.kind = 'c'),
    () => (order.n = 2.5),
    () => (order.n = '1'),
    () => (order.extra = true),
    () => delete order.tag,
    () => (order.lines = [{ ok: true }, { ok: false }, { ok: true }]),
    () => (order.lines = [{ ok: 'yes' }]),
    () => (order.tag = 'long'),
  ];
  pick(rand, breaks)();
  return order;
}

type Shape = 'valid' | 'truncated' | 'breaking' | 'cut-by-upstream' | 'no-call';
interface Case {
  name: string;
  options: Pick<ChatOptions, 'responseFormat' | 'tools' | 'toolChoice'>;
  check: z.ZodType;
  tool?: string;
  /** A complete value of the wrong kind for this case. */
  breaking: (rand: Rand) => unknown;
}

const CASES: Case[] = [
  { name: 'json_object', options: { responseFormat: { type: 'json_object' } }, check: anyObject, breaking: (rand) => pick(rand, [[1, 2], 'text', 42, null, [validOrder(rand)]]) },
  { name: 'strict json_schema', options: { responseFormat: { type: 'json_schema', name: 'order', schema: SHORT_ORDER, strict: true } }, check: shortOrderCheck, breaking: breakingOrder },
  { name: 'strict tool, auto', options: { tools: [{ name: 'order', parameters: SHORT_ORDER, strict: true }] }, check: shortOrderCheck, tool: 'order', breaking: breakingOrder },
  { name: 'tool, tool_choice required', options: { tools: [{ name: 'order', parameters: SHORT_ORDER }], toolChoice: { type: 'required' } }, check: shortOrderCheck, tool: 'order', breaking: breakingOrder },
];

interface Script {
  c: Case;
  shape: Shape;
  /** What the upstream writes: the reply text or the call's arguments. */
  body: string;
  /** The upstream answers as an SSE stream (else one JSON body, as servers that ignore `stream`). */
  sse: boolean;
  /** The client streams (svc's onPart). */
  clientStreams: boolean;
  /** Characters per upstream chunk. */
  chunk: number;
}

function script(seed: number): Script {
  const rand = prng(seed); // seeded, so a failing seed can be replayed
  const c = CASES[seed % CASES.length]!;
  const shape = pick<Shape>(rand, c.tool !== undefined && c.options.toolChoice?.type === 'required'
    ? ['valid', 'truncated', 'breaking', 'cut-by-upstream', 'no-call']
    : ['valid', 'truncated', 'breaking', 'cut-by-upstream']);
  const valid = JSON.stringify(validOrder(rand), null, rand() < 0.3 ? 2 : undefined);
  const body = shape === 'breaking' ? JSON.stringify(c.breaking(rand))
    : shape === 'truncated' || shape === 'cut-by-upstream' ? valid.slice(0, 1 + Math.floor(rand() * (valid.length - 1)))
      : shape === 'no-call' ? 'I would rather not.'
        : valid;
  return { c, shape, body, sse: rand() < 0.85, clientStreams: rand() < 0.5, chunk: 1 + Math.floor(rand() * 12) };
}

/** The upstream's answer for a script: chunks of the body, then its finish reason and usage. */
function upstreamAnswer(s: Script): { events: object[]; whole: object } {
  const call = s.c.tool !== undefined && s.shape !== 'no-call';
  const finish = s.shape === 'cut-by-upstream' ? 'length' : call ? 'tool_calls' : 'stop';
  const pieces: string[] = [];
  for (let i = 0; i < s.body.length; i += s.chunk) pieces.push(s.body.slice(i, i + s.chunk));
  const delta = (piece: string, first: boolean) => call
    ? { tool_calls: [{ index: 0, ...(first ? { id: 'call_1', type: 'function' } : {}), function: { ...(first ? { name: s.c.tool } : {}), arguments: piece } }] }
    : { content: piece };
  const events = [
    { choices: [{ index: 0, delta: { role: 'assistant' } }] },
    ...pieces.map((piece, i) => ({ choices: [{ index: 0, delta: delta(piece, i === 0), finish_reason: null }] })),
    { choices: [{ index: 0, delta: {}, finish_reason: finish }] },
    { choices: [], usage: { prompt_tokens: 5, completion_tokens: pieces.length } },
  ];
  const message = call
    ? { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: s.c.tool, arguments: s.body } }] }
    : { role: 'assistant', content: s.body };
  return { events, whole: { choices: [{ index: 0, message, finish_reason: finish }], usage: { prompt_tokens: 5, completion_tokens: 3 } } };
}

let server: ScriptedUpstream;
let upstream: OpenAIUpstream;
before(async () => {
  ({ server, upstream } = await startUpstreamClient());
  // The seed travels in the prompt, so requests can run side by side.
  server.handle((request, res) => {
    const seed = Number((request.body as { messages: { content: string }[] }).messages[0]!.content);
    const { events, whole } = upstreamAnswer(script(seed));
    if (!script(seed).sse) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(whole));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    for (const event of events) res.write(`data: ${JSON.stringify(event)}\n\n`);
    res.end('data: [DONE]\n\n');
  });
});
after(async () => {
  await upstream.close();
  await server.close();
});

async function run(seed: number, s: Script): Promise<{ result?: GenerateResult; error?: unknown; parts: GenerationPart[] }> {
  const parts: GenerationPart[] = [];
  try {
    const result = await upstream.model('m', 'up/m').chat([{ role: 'user', content: String(seed) }], {
      ...s.c.options,
      ...(s.clientStreams ? { onPart: (part: GenerationPart) => parts.push(part) } : {}),
    });
    return { result, parts };
  } catch (error) {
    return { error, parts };
  }
}

describe(`upstream replies, ${SEEDS} seeds over ${CASES.length} structured requests`, () => {
  test('stop/tool_calls ⇒ parses and validates; a broken promise is a 502, never a normal finish', async () => {
    const outcomes = new Map<string, number>();
    const PARALLEL = 8;
    let next = 1;
    await Promise.all(Array.from({ length: PARALLEL }, async () => {
      while (next <= SEEDS) {
        const seed = next++;
        const s = script(seed);
        const { result, error, parts } = await run(seed, s);
        const what = `seed ${seed} (${s.c.name}, ${s.shape}, ${s.sse ? 'sse' : 'whole'}): ${JSON.stringify(s.body)}`;
        // Streamed parts are the upstream's reply as it came, whatever the verdict.
        if (s.clientStreams && s.shape !== 'no-call') {
          const streamed = parts.map((p) => (p.type === 'text-delta' ? p.text : p.type === 'tool-call-delta' ? p.argumentsDelta : '')).join('');
          assert.equal(streamed, s.body, what);
        }
        if (s.shape === 'valid' || s.shape === 'cut-by-upstream') {
          assert.equal(error, undefined, `${what}: ${String(error)}`);
          const r = result!;
          if (s.shape === 'cut-by-upstream') {
            assert.equal(r.finishReason, 'length', what);
          } else if (s.c.tool === undefined) {
            assert.equal(r.finishReason, 'stop', what);
            assert.ok(s.c.check.safeParse(JSON.parse(r.text)).success, what);
          } else {
            assert.equal(r.finishReason, 'tool_calls', what);
            assert.equal(r.toolCalls.length, 1, what);
            assert.equal(r.toolCalls[0]!.name, s.c.tool, what);
            assert.ok(s.c.check.safeParse(JSON.parse(r.toolCalls[0]!.arguments)).success, what);
          }
        } else {
          assert.ok(error instanceof ApiError, `${what}: expected an error, got ${JSON.stringify(result)}`);
          assert.equal(error.status, 502, what);
          assert.equal(error.code, 'upstream_structured_output_invalid', what);
          assert.match(error.message, /^Upstream 'up' said its (reply|call of "order") was complete \(finish_reason (stop|tool_calls)\) but /, what);
          const expected = s.shape === 'truncated' ? /is not complete JSON \(\d+ characters, ending /
            : s.shape === 'no-call' ? /a tool call was required and none was made/
              : /does not match the schema \((\/|the root|the reply is JSON but not an object)/;
          assert.match(error.message, expected, what);
          // The reply is not repeated whole: at most the end of an incomplete value.
          assert.ok(error.message.length < 420, what);
        }
        const key = `${s.shape}:${error === undefined ? result!.finishReason : 'error'}`;
        outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
      }
    }));
    // Not vacuous: every shape occurred often, streamed or not.
    for (const shape of ['valid', 'truncated', 'breaking', 'cut-by-upstream', 'no-call']) {
      const count = [...outcomes].filter(([key]) => key.startsWith(`${shape}:`)).reduce((sum, [, n]) => sum + n, 0);
      assert.ok(count >= (shape === 'no-call' ? 20 : 80), JSON.stringify([...outcomes]));
    }
  });

  test('a long incomplete value is quoted by its last 40 characters only', async () => {
    const { server: own, upstream: client } = await startUpstreamClient();
    try {
      const long = `{"tag":"${'x'.repeat(5000)}`;
      own.handle((_req, res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(`data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: long } }] })}\n\n`);
        res.end(`data: ${JSON.stringify({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}\n\ndata: [DONE]\n\n`);
      });
      await assert.rejects(client.model('m', 'up/m').chat([{ role: 'user', content: 'x' }], { responseFormat: { type: 'json_object' } }), (error: unknown) => {
        assert.ok(error instanceof ApiError);
        assert.match(error.message, new RegExp(`\\(5008 characters, ending "…x{40}"\\)`));
        assert.ok(error.message.length < 300, error.message);
        return true;
      });
    } finally {
      await client.close();
      await own.close();
    }
  });
});
