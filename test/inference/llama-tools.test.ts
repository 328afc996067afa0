/**
 * The pieces between OpenAI-style tools and node-llama-cpp's function calling: the history
 * conversion (rendered by a real chat wrapper), the plan per tool_choice, the forcing wrapper,
 * and the assembler that turns parameter chunks into tool-call parts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import * as lib from 'node-llama-cpp';
import { ChatMLChatWrapper, FunctionaryChatWrapper, LlamaText } from 'node-llama-cpp';
import type { ChatMessage, GenerationPart } from '../../src/inference/language-model.ts';
import { toChatHistory } from '../../src/inference/llama-chat-history.ts';
import { chatWrapperFor, planTools, ToolCallAssembler } from '../../src/inference/llama-tools.ts';
import { ApiError } from '../../src/shared/api-error.ts';

const weather = { name: 'get_weather', description: 'Weather for a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } };
const time = { name: 'get_time', parameters: { type: 'object', properties: { zone: { type: 'string' } } } };

const conversation: ChatMessage[] = [
  { role: 'system', content: 'Be brief.' },
  { role: 'user', content: 'Weather in Paris and Rome?' },
  { role: 'assistant', content: '', toolCalls: [
    { id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
    { id: 'call_2', name: 'get_weather', arguments: '{"city":"Rome"}' },
  ] },
  { role: 'tool', toolCallId: 'call_1', content: '{"celsius":21}' },
  { role: 'tool', toolCallId: 'call_2', content: 'sunny' },
];

describe('toChatHistory', () => {
  it('keeps a tool exchange in one model turn and continues it after the results', () => {
    const history = toChatHistory(conversation);
    assert.equal(history.length, 3, 'system, user, and the model turn that is continued');
    const turn = history[2]!;
    assert.equal(turn.type, 'model');
    assert.deepEqual(turn.type === 'model' ? turn.response : [], [
      { type: 'functionCall', name: 'get_weather', params: { city: 'Paris' }, result: { celsius: 21 } },
      { type: 'functionCall', name: 'get_weather', params: { city: 'Rome' }, result: 'sunny' },
    ]);
  });

  it("renders past calls and results in the template's syntax, also without tools in the request", () => {
    const wrapper = new ChatMLChatWrapper();
    const text = wrapper.generateContextState({ chatHistory: toChatHistory(conversation) }).contextText.toString();
    assert.match(text, /\|\|call: get_weather\(\{"city": ?"Paris"\}\)/);
    assert.match(text, /\|\|result: \{"celsius": ?21\}/);
    assert.match(text, /\|\|result: "sunny"/);
    assert.ok(!text.includes('Provided functions'), 'no tools section without tools');
  });

  it('starts a new model turn after an answer that follows the tool results', () => {
    const history = toChatHistory([...conversation, { role: 'assistant', content: 'Paris 21°C, Rome sunny.' }, { role: 'user', content: 'Thanks' }]);
    assert.deepEqual(history.map((h) => h.type), ['system', 'user', 'model', 'user', 'model']);
    const turn = history[2]!;
    assert.equal(turn.type === 'model' ? turn.response.at(-1) : undefined, 'Paris 21°C, Rome sunny.');
  });

  it('refuses a tool call that was never answered', () => {
    assert.throws(() => toChatHistory(conversation.slice(0, 4)), (error: unknown) =>
      error instanceof ApiError && error.status === 400 && error.param === 'messages' && error.message.includes('"call_2"'));
  });
});

describe('planTools', () => {
  it('maps each tool_choice onto what is documented, callable and forced', () => {
    const tools = [weather, time];
    const auto = planTools({ tools });
    assert.deepEqual(Object.keys(auto.callable ?? {}), ['get_weather', 'get_time']);
    assert.equal(auto.force, false);
    const required = planTools({ tools, toolChoice: { type: 'required' }, parallelToolCalls: false });
    assert.equal(required.force, true);
    assert.equal(required.maxParallelFunctionCalls, 1);
    const named = planTools({ tools, toolChoice: { type: 'function', name: 'get_time' } });
    assert.deepEqual(Object.keys(named.documented ?? {}), ['get_weather', 'get_time'], 'the whole toolbox is documented');
    assert.deepEqual(Object.keys(named.callable ?? {}), ['get_time'], 'only the named one can be called');
    assert.equal(named.maxParallelFunctionCalls, 1);
    const none = planTools({ tools, toolChoice: { type: 'none' } });
    assert.equal(none.callable, undefined);
    assert.equal(none.documented, undefined);
  });

  it("takes tool names that are Object.prototype's keys as plain names", () => {
    const plan = planTools({ tools: [{ name: '__proto__' }, { name: 'constructor' }], toolChoice: { type: 'function', name: '__proto__' } });
    assert.deepEqual(Object.keys(plan.documented ?? {}), ['__proto__', 'constructor']);
    assert.deepEqual(Object.keys(plan.callable ?? {}), ['__proto__']);
    assert.ok(Object.hasOwn(plan.callable!, '__proto__'));
  });

  it('gives a tool without parameters an empty object schema, and names a bad schema by tool index', () => {
    assert.deepEqual(planTools({ tools: [{ name: 'ping' }] }).callable?.ping?.params, { type: 'object', properties: {} });
    assert.throws(() => planTools({ tools: [weather, { name: 'bad', parameters: { type: 'object', properties: { x: { type: 'string', pattern: 'x' } } } }] }), (error: unknown) =>
      error instanceof ApiError && error.param === 'tools[1].function.parameters' && error.message.includes("'pattern'"));
  });
});

describe('chatWrapperFor', () => {
  it('leaves the wrapper alone for auto and none', () => {
    const base = new ChatMLChatWrapper();
    assert.equal(chatWrapperFor(base, planTools({ tools: [weather] }), lib), base);
    assert.equal(chatWrapperFor(base, planTools({ tools: [weather], toolChoice: { type: 'none' } }), lib), base);
  });

  it('forces a call by entering function-calling mode at once, documenting every tool', () => {
    const base = new ChatMLChatWrapper();
    const plan = planTools({ tools: [weather, time], toolChoice: { type: 'function', name: 'get_time' } });
    const wrapper = chatWrapperFor(base, plan, lib);
    const state = wrapper.generateContextState({ chatHistory: toChatHistory([{ role: 'user', content: 'hi' }]), availableFunctions: plan.callable });
    assert.equal(state.noPrefixTrigger?.type, 'functionCall');
    const text = state.contextText.toString();
    assert.ok(text.includes('get_weather') && text.includes('get_time'), 'both tools are documented although one is callable');
    assert.equal(wrapper.settings, base.settings, 'everything else is the model wrapper');
  });

  it('uses initiallyEngaged for wrappers whose calls are initially engaged', () => {
    const wrapper = chatWrapperFor(new FunctionaryChatWrapper(), planTools({ tools: [weather], toolChoice: { type: 'required' } }), lib);
    const state = wrapper.generateContextState({ chatHistory: toChatHistory([{ role: 'user', content: 'hi' }]), availableFunctions: {} });
    assert.deepEqual(state.functionCall, { initiallyEngaged: true, disengageInitiallyEngaged: [] });
    assert.ok(LlamaText.isLlamaText(state.contextText));
  });
});

describe('ToolCallAssembler', () => {
  it("streams a start, then deltas that add up to the arguments, never node-llama-cpp's terminator", () => {
    const parts: GenerationPart[] = [];
    const calls = new ToolCallAssembler((part) => parts.push(part));
    for (const paramsChunk of ['{', ' "city"', ':', '"Pa', 'ris"', '\n', '}', '\n', '\n\n', '\n']) {
      calls.chunk({ callIndex: 0, functionName: 'get_weather', paramsChunk, done: false });
    }
    calls.called('get_weather', { city: 'Paris' });
    const [call] = calls.calls();
    assert.equal(call?.arguments, '{ "city":"Paris"\n}');
    assert.match(call!.id, /^call_[A-Za-z0-9]{24}$/);
    assert.deepEqual(parts[0], { type: 'tool-call-start', index: 0, id: call!.id, name: 'get_weather' });
    const streamed = parts.slice(1).map((p) => (p.type === 'tool-call-delta' ? p.argumentsDelta : '')).join('');
    assert.equal(streamed, call!.arguments);
  });

  it('numbers calls from 0 and keeps a call cut short with what was streamed', () => {
    const calls = new ToolCallAssembler(undefined);
    calls.chunk({ callIndex: 0, functionName: 'a', paramsChunk: '{}\n\n\n\n', done: true });
    calls.called('a', {});
    calls.chunk({ callIndex: 1, functionName: 'b', paramsChunk: '{"x": 1', done: false });
    assert.deepEqual(calls.calls().map((c) => [c.name, c.arguments]), [['a', '{}'], ['b', '{"x": 1']]);
  });
});
