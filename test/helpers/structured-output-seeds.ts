/**
 * The property behind the structured-output guarantee on the embedded engine, shared by the
 * test files that run it (test/inference/structured-output-guarantee*.test.ts: one file per
 * group of cases, so `node --test` can run them side by side). On the tiny random-weights
 * fixture (the harshest test of a grammar), every reply that says `stop` (response_format) or
 * `tool_calls` parses and validates against the client's schema, and every other reply says
 * `length`. In process, on LlamaEngine.chat, with small and varied max_tokens so that both
 * complete and cut replies occur; even seeds stream (the streamed parts must add up to the
 * reply), and every fourth seed sends stop sequences that occur in any JSON value (they must not
 * cut it).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { z } from 'zod';
import type { ChatOptions, GenerateResult, GenerationPart } from '../../src/inference/language-model.ts';
import { LlamaEngine } from '../../src/inference/llama-engine.ts';
import { ModelCatalog } from '../../src/inference/model-catalog.ts';
import { tinyModelPath } from './daemon-process.ts';

const PARALLEL = 4;

/** Nested object, array, enum, integer, number, nullable short string: completes in about 60 tokens on the fixture. */
export const ORDER = {
  type: 'object',
  properties: {
    kind: { enum: ['a', 'b'] },
    n: { type: 'integer' },
    price: { type: 'number' },
    lines: { type: 'array', items: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'], additionalProperties: false }, maxItems: 2 },
    tag: { type: ['string', 'null'], maxLength: 3 },
  },
  required: ['kind', 'n', 'price', 'lines', 'tag'],
  additionalProperties: false,
} as const;
export const orderCheck = z.fromJSONSchema(ORDER as unknown as Parameters<typeof z.fromJSONSchema>[0]);
export const anyObject = z.record(z.string(), z.unknown());

/** ORDER without `price`: the schema the HTTP and upstream checks use (fewer tokens to complete through the daemon). */
export const SHORT_ORDER = {
  type: 'object',
  properties: {
    kind: { enum: ['a', 'b'] },
    n: { type: 'integer' },
    lines: { type: 'array', items: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'], additionalProperties: false }, maxItems: 2 },
    tag: { type: ['string', 'null'], maxLength: 3 },
  },
  required: ['kind', 'n', 'lines', 'tag'],
  additionalProperties: false,
};
export const shortOrderCheck = z.fromJSONSchema(SHORT_ORDER as Parameters<typeof z.fromJSONSchema>[0]);

export interface StructuredCase {
  name: string;
  options: Pick<ChatOptions, 'responseFormat' | 'tools' | 'toolChoice'>;
  /** The validator of the reply text (response_format) or of the call's arguments (tools). */
  check: z.ZodType;
  tool?: string;
  seeds: number;
  /** The smallest max_tokens; each seed adds 0 to `spread` − 1 (a tool call's template prefix takes ~10 tokens). */
  minTokens: number;
  /**
   * How far max_tokens ranges above `minTokens` (default 72): wide enough that a tenth of the
   * seeds finish their value, so the property is checked on complete replies, not only on cut ones.
   */
  spread?: number;
}

/** One reply, streamed for even seeds (the parts must rebuild it exactly). */
async function reply(engine: LlamaEngine, c: StructuredCase, seed: number): Promise<GenerateResult> {
  const parts: GenerationPart[] = [];
  const stream = seed % 2 === 0;
  const result = await engine.model('tiny')!.chat([{ role: 'user', content: 'Place an order.' }], {
    ...c.options,
    temperature: 0.8,
    seed,
    maxTokens: c.minTokens + ((seed * 37) % (c.spread ?? 72)),
    ...(seed % 4 === 1 ? { stop: [',', '"', '}', ' '] } : {}),
    ...(stream ? { onPart: (part: GenerationPart) => parts.push(part) } : {}),
  });
  if (stream) {
    assert.equal(parts.filter((p) => p.type === 'text-delta').map((p) => p.text).join(''), result.text, `seed ${seed}: streamed text`);
    const args = result.toolCalls.map((_call, i) => parts.filter((p) => p.type === 'tool-call-delta' && p.index === i).map((p) => (p.type === 'tool-call-delta' ? p.argumentsDelta : '')).join(''));
    assert.deepEqual(args, result.toolCalls.map((call) => call.arguments), `seed ${seed}: streamed arguments`);
  }
  return result;
}

function assertGuarantee(c: StructuredCase, seed: number, result: GenerateResult): void {
  const what = `seed ${seed}: ${result.finishReason} ${JSON.stringify(result.text)} ${JSON.stringify(result.toolCalls)}`;
  if (c.tool === undefined) {
    assert.ok(result.finishReason === 'stop' || result.finishReason === 'length', what);
    if (result.finishReason === 'stop') {
      const parsed = c.check.safeParse(JSON.parse(result.text));
      assert.ok(parsed.success, `${what}: ${parsed.error?.message}`);
    }
    return;
  }
  assert.ok(result.finishReason === 'tool_calls' || result.finishReason === 'length', what);
  if (result.finishReason === 'tool_calls') {
    assert.ok(result.toolCalls.length > 0, what);
    for (const call of result.toolCalls) {
      assert.equal(call.name, c.tool, what);
      const parsed = c.check.safeParse(JSON.parse(call.arguments));
      assert.ok(parsed.success, `${what}: ${parsed.error?.message}`);
    }
  }
}

/** Registers the property for `cases` on one engine of the fixture model (started before, closed after). */
export function seedProperty(title: string, cases: readonly StructuredCase[]): void {
  let engine: LlamaEngine;
  before(async () => {
    const catalog = await ModelCatalog.load([{ id: 'tiny', path: tinyModelPath() }]);
    engine = new LlamaEngine(catalog, {
      parallel: PARALLEL, queueSize: 64, defaultMaxTokens: 16, keepAliveMs: Number.POSITIVE_INFINITY, gpu: 'cpu', threads: 1, contextSize: 2048,
      log: { info() {}, warn() {}, debug() {} },
    });
  });
  after(() => engine.close());

  describe(title, () => {
    for (const c of cases) {
      test(`${c.name}: ${c.seeds} seeds, stop/tool_calls ⇒ parses and validates, else length`, async () => {
        const finishes = new Map<string, number>();
        let next = 1;
        // PARALLEL requests at a time: the engine decodes them as sequences of one batch.
        await Promise.all(Array.from({ length: PARALLEL }, async () => {
          while (next <= c.seeds) {
            const seed = next++;
            const result = await reply(engine, c, seed);
            assertGuarantee(c, seed, result);
            finishes.set(result.finishReason, (finishes.get(result.finishReason) ?? 0) + 1);
          }
        }));
        // Not vacuous: both complete and cut replies occurred.
        const complete = (finishes.get('stop') ?? 0) + (finishes.get('tool_calls') ?? 0);
        assert.ok(complete >= c.seeds / 10 && (finishes.get('length') ?? 0) >= c.seeds / 10, JSON.stringify([...finishes]));
      });
    }
  });
}
