/**
 * Tool calls on real llama.cpp (the tiny fixture) through node-llama-cpp's LlamaChat, with the
 * plan, wrapper and assembler the engine uses, across the chat wrappers node-llama-cpp ships:
 * the daemon's tests only see the fixture's ChatML template, real models bring their own.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as lib from 'node-llama-cpp';
import { LlamaChat, type ChatWrapper, type Llama, type LlamaContext, type LlamaModel } from 'node-llama-cpp';
import { z } from 'zod';
import type { ChatOptions, ToolCall } from '../../src/inference/language-model.ts';
import { toChatHistory } from '../../src/inference/llama-chat-history.ts';
import { chatWrapperFor, planTools, ToolCallAssembler } from '../../src/inference/llama-tools.ts';
import { disposeTinyLlama, loadTinyLlama } from '../helpers/tiny-llama.ts';

const tools = [
  { name: 'switch', parameters: { type: 'object', properties: { on: { type: 'boolean' } }, required: ['on'] } },
  { name: 'pick', parameters: { type: 'object', properties: { n: { enum: [1, 2, 3] }, tag: { type: 'string', maxLength: 6 } }, required: ['n', 'tag'] } },
];
const validators = new Map(tools.map((t) => [t.name, z.fromJSONSchema(t.parameters as unknown as Parameters<typeof z.fromJSONSchema>[0])]));

let llama: Llama;
let model: LlamaModel;
let context: LlamaContext;
before(async () => {
  ({ llama, model, context } = await loadTinyLlama(4096));
});
after(() => disposeTinyLlama({ llama, model, context }));

/** One chat turn the way the engine runs it: plan, wrapper, LlamaChat with functions, assembler. */
async function callTools(base: ChatWrapper, options: Pick<ChatOptions, 'toolChoice' | 'parallelToolCalls'>, seed: number): Promise<{ calls: ToolCall[]; stopReason: string }> {
  const plan = planTools({ tools, ...options });
  const chat = new LlamaChat({ contextSequence: context.getSequence(), chatWrapper: chatWrapperFor(base, plan, lib), autoDisposeSequence: true });
  const assembler = new ToolCallAssembler(undefined);
  try {
    const result = await chat.generateResponse(toChatHistory([{ role: 'user', content: 'Do it.' }]), {
      functions: plan.callable!,
      ...(plan.maxParallelFunctionCalls !== undefined ? { maxParallelFunctionCalls: plan.maxParallelFunctionCalls } : {}),
      maxTokens: 300, temperature: 1, seed,
      onFunctionCallParamsChunk: (chunk) => assembler.chunk(chunk),
      onFunctionCall: (call) => assembler.called(call.functionName, call.params),
    });
    return { calls: assembler.calls(), stopReason: result.metadata.stopReason };
  } finally {
    chat.dispose();
  }
}

function assertValid(call: ToolCall): void {
  const parsed = validators.get(call.name)!.safeParse(JSON.parse(call.arguments));
  assert.ok(parsed.success, `${call.name}(${call.arguments}): ${parsed.error?.message}`);
}

const WRAPPERS = [
  'ChatMLChatWrapper', 'QwenChatWrapper', 'Llama3_1ChatWrapper', 'Llama3ChatWrapper', 'Llama3_2LightweightChatWrapper', 'MistralChatWrapper',
  'FunctionaryChatWrapper', 'HarmonyChatWrapper', 'GemmaChatWrapper', 'Gemma4ChatWrapper', 'DeepSeekChatWrapper', 'SeedChatWrapper',
  'MuseChatWrapper', 'Llama2ChatWrapper', 'GeneralChatWrapper',
] as const;

describe('a forced call, on every chat wrapper node-llama-cpp ships', () => {
  for (const name of WRAPPERS) {
    it(name, async () => {
      const Wrapper = lib[name] as new () => ChatWrapper;
      for (const seed of [1, 2]) {
        const named = await callTools(new Wrapper(), { toolChoice: { type: 'function', name: 'pick' } }, seed);
        assert.equal(named.stopReason, 'functionCalls');
        assert.deepEqual(named.calls.map((c) => c.name), ['pick']);
        assertValid(named.calls[0]!);
        const required = await callTools(new Wrapper(), { toolChoice: { type: 'required' }, parallelToolCalls: false }, seed);
        assert.equal(required.calls.length, 1);
        assertValid(required.calls[0]!);
      }
    });
  }
});

describe('parallel calls (a wrapper whose syntax allows several per turn)', () => {
  it('several calls when allowed, each with its own id; exactly one with parallel_tool_calls false', async () => {
    let most = 0;
    for (const seed of [1, 2, 3]) {
      const parallel = await callTools(new lib.QwenChatWrapper(), { toolChoice: { type: 'required' } }, seed);
      most = Math.max(most, parallel.calls.length);
      assert.equal(new Set(parallel.calls.map((c) => c.id)).size, parallel.calls.length, 'distinct call ids');
      // The random model keeps calling until max_tokens: every call but a cut-off last one is complete.
      for (const call of parallel.stopReason === 'maxTokens' ? parallel.calls.slice(0, -1) : parallel.calls) assertValid(call);
      const single = await callTools(new lib.QwenChatWrapper(), { toolChoice: { type: 'required' }, parallelToolCalls: false }, seed);
      assert.equal(single.stopReason, 'functionCalls');
      assert.equal(single.calls.length, 1);
    }
    assert.ok(most > 1, 'the fixture does make parallel calls when they are allowed');
  });
});
