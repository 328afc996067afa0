/**
 * The structured-output guarantee through the daemon, as a property over 1,000 seeds per schema
 * (the in-process property on the engine: test/inference/structured-output-guarantee*.test.ts).
 * `svc serve` on the random-weights fixture, driven with the official `openai` client: each seed
 * takes one of chat completions or the Responses API, streamed or whole, in turn (250 seeds each),
 * with a small max_tokens that varies with the seed, so that both complete and cut replies occur
 * in every one of the four. A reply that says `stop`/`tool_calls` (Responses: `completed`) parses
 * and validates against the request's schema; any other says `length` (Responses: `incomplete`,
 * reason `max_output_tokens`); the one documented exception is a 500 `structured_output_invalid`
 * for complete JSON that breaks the schema (tool arguments only, here). Stop sequences never cut
 * a grammar-constrained value: the reply with them equals the reply without.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import { z } from 'zod';
import { startDaemonWithClient, type DaemonProcess } from '../helpers/daemon-process.ts';
import { SHORT_ORDER, shortOrderCheck } from '../helpers/structured-output-seeds.ts';

const SEEDS = 1000;
/** Requests in flight at once: the daemon's default --parallel, so they decode as one batch. */
const IN_FLIGHT = 4;

const anyObject = z.record(z.string(), z.unknown());

/** The strict tool's parameters: an enum, an integer, a nullable short string. */
const TICKET = {
  type: 'object',
  properties: { kind: { enum: ['a', 'b'] }, n: { type: 'integer' }, tag: { type: ['string', 'null'], maxLength: 3 } },
  required: ['kind', 'n', 'tag'],
  additionalProperties: false,
};
const ticketCheck = z.fromJSONSchema(TICKET as Parameters<typeof z.fromJSONSchema>[0]);

let daemon: DaemonProcess;
let client: OpenAI;
before(async () => {
  ({ daemon, client } = await startDaemonWithClient());
});
after(async () => {
  assert.equal(await daemon.stop(), 0);
});

/** The reply as the client sees it: text, calls, and a finish in chat-completions terms. */
interface Reply {
  text: string;
  calls: { name: string; arguments: string }[];
  finish: string;
  /** Reply tokens, as the usage says. */
  tokens: number;
}

type ChatBody = Omit<OpenAI.Chat.ChatCompletionCreateParamsNonStreaming, 'model' | 'messages' | 'stream'>;
type ResponsesBody = Omit<OpenAI.Responses.ResponseCreateParamsNonStreaming, 'model' | 'input' | 'stream'>;

async function chat(body: ChatBody, stream: boolean): Promise<Reply> {
  const request = { model: 'tiny', messages: [{ role: 'user' as const, content: 'Place an order.' }], ...body };
  if (!stream) {
    const completion = await client.chat.completions.create(request);
    const choice = completion.choices[0]!;
    const calls = (choice.message.tool_calls ?? []).map((c) => (c.type === 'function' ? c.function : { name: `(${c.type})`, arguments: '' }));
    return { text: choice.message.content ?? '', calls, finish: choice.finish_reason, tokens: completion.usage!.completion_tokens };
  }
  const reply: Reply = { text: '', calls: [], finish: '', tokens: -1 };
  for await (const chunk of await client.chat.completions.create({ ...request, stream: true, stream_options: { include_usage: true } })) {
    if (chunk.usage) reply.tokens = chunk.usage.completion_tokens;
    const choice = chunk.choices[0];
    if (choice === undefined) continue;
    reply.text += choice.delta.content ?? '';
    for (const call of choice.delta.tool_calls ?? []) {
      reply.calls[call.index] ??= { name: '', arguments: '' };
      reply.calls[call.index]!.name += call.function?.name ?? '';
      reply.calls[call.index]!.arguments += call.function?.arguments ?? '';
    }
    if (choice.finish_reason !== null) reply.finish = choice.finish_reason;
  }
  return reply;
}

/** A Responses reply in chat terms; `incomplete` must say why: `max_output_tokens`. */
function fromResponse(response: OpenAI.Responses.Response, what: string): Reply {
  const text = response.output.flatMap((item) => (item.type === 'message' ? item.content.map((c) => (c.type === 'output_text' ? c.text : '')) : [])).join('');
  const calls = response.output.flatMap((item) => (item.type === 'function_call' ? [{ name: item.name, arguments: item.arguments }] : []));
  if (response.status === 'incomplete') assert.equal(response.incomplete_details?.reason, 'max_output_tokens', what);
  else assert.equal(response.status, 'completed', what);
  const finish = response.status === 'incomplete' ? 'length' : calls.length > 0 ? 'tool_calls' : 'stop';
  return { text, calls, finish, tokens: response.usage!.output_tokens };
}

async function respond(body: ResponsesBody, stream: boolean, input: string, what: string): Promise<Reply> {
  const request = { model: 'tiny', input, ...body };
  if (!stream) return fromResponse(await client.responses.create(request), what);
  let text = '';
  const args = new Map<string, string>();
  let final: OpenAI.Responses.Response | undefined;
  for await (const event of await client.responses.create({ ...request, stream: true })) {
    if (event.type === 'response.output_text.delta') text += event.delta;
    else if (event.type === 'response.function_call_arguments.delta') args.set(event.item_id, (args.get(event.item_id) ?? '') + event.delta);
    else if (event.type === 'response.completed' || event.type === 'response.incomplete') final = event.response;
  }
  assert.ok(final, `${what}: the stream ends with response.completed or response.incomplete`);
  const reply = fromResponse(final, what);
  assert.equal(text, reply.text, `${what}: streamed deltas add up to the final text`);
  const finalArgs = final.output.flatMap((item) => (item.type === 'function_call' ? [[item.id ?? '', item.arguments] as const] : []));
  assert.deepEqual(finalArgs, [...args], `${what}: streamed argument deltas add up to the final calls`);
  return reply;
}

function assertGuarantee(reply: Reply, check: z.ZodType, tool: string | undefined, limit: number, what: string): void {
  const where = `${what}: ${JSON.stringify(reply)}`;
  assert.ok(reply.tokens >= 0 && reply.tokens <= limit, `${where}: at most max_tokens ${limit}`);
  if (tool === undefined) {
    assert.ok(reply.finish === 'stop' || reply.finish === 'length', where);
    if (reply.finish === 'stop') assert.ok(check.safeParse(JSON.parse(reply.text)).success, where);
    return;
  }
  assert.ok(reply.finish === 'tool_calls' || reply.finish === 'length', where);
  if (reply.finish === 'tool_calls') {
    assert.ok(reply.calls.length > 0, where);
    for (const call of reply.calls) {
      assert.equal(call.name, tool, where);
      assert.ok(check.safeParse(JSON.parse(call.arguments)).success, where);
    }
  }
}

/**
 * The one documented exception to a reply (docs/runtime.md, Structured output): complete JSON
 * that breaks the schema is a 500 `structured_output_invalid`, never a `tool_calls` finish. Only
 * tool arguments reach it on the fixture (node-llama-cpp's params grammar lets an integer's
 * exponent run to 16 digits: `-7E9087` parses to -Infinity); a seeded or greedy request would
 * repeat it, so a whole answer says `x-should-retry: false` (a stream's error event has no headers).
 */
function isDocumentedGap(error: unknown, c: Case, stream: boolean): boolean {
  if (c.tool === undefined || !(error instanceof OpenAI.APIError) || error.code !== 'structured_output_invalid') return false;
  assert.match(error.message, new RegExp(`The model's call of "${c.tool}" is complete JSON that does not match the schema`));
  if (!stream) assert.equal(error.headers?.get('x-should-retry'), 'false');
  return true;
}

interface Case {
  name: string;
  check: z.ZodType;
  tool?: string;
  chat: ChatBody;
  responses: ResponsesBody;
  /** max_tokens runs from `minTokens` to `minTokens + spread − 1` over the seeds of each mode. */
  minTokens: number;
  spread: number;
}

const CASES: Case[] = [
  {
    // Complete values take 23–320 tokens on the fixture (most over 100): the widest spread.
    name: 'json_object', check: anyObject, minTokens: 8, spread: 120,
    chat: { response_format: { type: 'json_object' } }, responses: { text: { format: { type: 'json_object' } } },
  },
  {
    // Complete values take 48–96 tokens.
    name: 'strict json_schema', check: shortOrderCheck, minTokens: 16, spread: 72,
    chat: { response_format: { type: 'json_schema', json_schema: { name: 'order', schema: SHORT_ORDER, strict: true } } },
    responses: { text: { format: { type: 'json_schema', name: 'order', schema: SHORT_ORDER, strict: true } } },
  },
  {
    // Complete calls take 40–48 tokens (the template's call prefix included). A smaller schema
    // than the others because each token costs several times as much here: node-llama-cpp's tool
    // preamble makes the prompt ~850 tokens. (The in-process property runs the nested one.)
    name: 'strict tool, tool_choice required', check: ticketCheck, tool: 'ticket', minTokens: 8, spread: 48,
    chat: { tools: [{ type: 'function', function: { name: 'ticket', parameters: TICKET, strict: true } }], tool_choice: 'required' },
    responses: { tools: [{ type: 'function', name: 'ticket', parameters: TICKET, strict: true }], tool_choice: 'required' },
  },
];

const MODES = [
  { api: 'chat', stream: false },
  { api: 'chat', stream: true },
  { api: 'responses', stream: false },
  { api: 'responses', stream: true },
] as const;
const modeName = (m: (typeof MODES)[number]) => `${m.api === 'chat' ? 'chat completions' : 'Responses API'} ${m.stream ? 'streamed' : 'whole'}`;

describe(`through the daemon: ${SEEDS} seeds per schema over chat completions and the Responses API, streamed and whole`, () => {
  for (const c of CASES) {
    test(`${c.name}: stop/tool_calls ⇒ parses and validates, else length`, async (t) => {
      const counts = MODES.map(() => ({ complete: 0, cut: 0, invalid: 0 }));
      let next = 1;
      await Promise.all(Array.from({ length: IN_FLIGHT }, async () => {
        while (next <= SEEDS) {
          const seed = next++;
          // Seed 1 takes the first mode, seed 2 the second, …; within a mode, max_tokens steps through the spread.
          const m = (seed - 1) % MODES.length;
          const limit = c.minTokens + ((Math.floor((seed - 1) / MODES.length) * 37) % c.spread);
          const what = `seed ${seed}, ${modeName(MODES[m]!)}, max_tokens ${limit}`;
          try {
            // The Responses API takes no seed: it varies the prompt instead, decoding greedily.
            const reply = await (MODES[m]!.api === 'chat'
              ? chat({ ...c.chat, temperature: 0.8, seed, max_tokens: limit }, MODES[m]!.stream)
              : respond({ ...c.responses, temperature: 0, max_output_tokens: limit, store: false }, MODES[m]!.stream, `Place order ${seed}.`, what)
            ).catch((error: unknown) => {
              if (!isDocumentedGap(error, c, MODES[m]!.stream)) throw new Error(`${what}: ${String(error)}`, { cause: error });
              return undefined;
            });
            if (reply === undefined) counts[m]!.invalid++;
            else {
              assertGuarantee(reply, c.check, c.tool, limit, what);
              counts[m]![reply.finish === 'length' ? 'cut' : 'complete']++;
            }
          } catch (error) {
            // The first failure ends the test: the other workers take no new seed.
            next = Number.POSITIVE_INFINITY;
            throw error;
          }
        }
      }));
      // Not vacuous: each mode saw a tenth of its seeds complete and a tenth cut.
      const report = MODES.map((mode, i) => `${modeName(mode)}: ${counts[i]!.complete} complete, ${counts[i]!.cut} cut, ${counts[i]!.invalid} structured_output_invalid`).join('; ');
      t.diagnostic(report);
      for (const { complete, cut } of counts) assert.ok(complete >= SEEDS / MODES.length / 10 && cut >= SEEDS / MODES.length / 10, report);
      assert.equal(counts.reduce((n, x) => n + x.complete + x.cut + x.invalid, 0), SEEDS);
    });
  }
});

describe('stop sequences do not cut a grammar-constrained value', () => {
  for (const c of CASES) {
    test(`${c.name}: the reply with stop sequences equals the reply without`, async () => {
      for (const seed of [1, 2, 3, 4]) {
        const body = { ...c.chat, temperature: 0.8, seed, max_tokens: 120 };
        const plain = await chat(body, false);
        const stopped = await chat({ ...body, stop: [',', '"', '}', ':'] }, false);
        assert.deepEqual({ ...stopped, calls: stopped.calls.map((x) => x.arguments) }, { ...plain, calls: plain.calls.map((x) => x.arguments) });
      }
    });
  }
});

describe('a tool call that node-llama-cpp\'s own check refuses', () => {
  // node-llama-cpp writes tool arguments with its own grammar, whose integers take exponents of
  // up to 16 digits; on the fixture, seed 146 writes `"n": -7E9087` (-Infinity once parsed) in a
  // call that is otherwise complete, and node-llama-cpp's check of the parsed call throws.
  const body = { tools: [{ type: 'function' as const, function: { name: 'order', parameters: SHORT_ORDER, strict: true } }], tool_choice: 'required' as const, temperature: 0.8, seed: 146 };

  test('is the documented 500 structured_output_invalid (not an internal error), whole and streamed', async () => {
    const cut = await chat({ ...body, max_tokens: 58 }, false);
    assert.equal(cut.finish, 'length');
    assert.match(cut.calls[0]?.arguments ?? '', /"n": -?[1-9][0-9]*[eE][+]?[0-9]{4,}/, 'the fixture still writes an integer beyond a double (else pick another seed)');
    for (const stream of [false, true]) {
      const error = await chat({ ...body, max_tokens: 68 }, stream).then(() => undefined, (e: unknown) => e);
      assert.ok(error instanceof OpenAI.APIError, String(error));
      assert.equal(error.code, 'structured_output_invalid', error.message);
      assert.match(error.message, /call of "order" is complete JSON that does not match the schema \(Expected type "integer"/);
      if (!stream) assert.equal(error.headers?.get('x-should-retry'), 'false');
    }
  });
});
