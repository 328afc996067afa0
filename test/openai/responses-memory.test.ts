import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ChatMessage } from '../../src/inference/language-model.ts';
import { ApiError } from '../../src/shared/api-error.ts';
import { MAX_REMEMBERED_CHARS, MAX_REMEMBERED_RESPONSES, ResponsesMemory } from '../../src/openai/responses-memory.ts';

const turns = (text: string): ChatMessage[] => [{ role: 'user', content: text }, { role: 'assistant', content: 'ok' }];

function notFound(memory: ResponsesMemory, id: string): void {
  assert.throws(() => memory.recall(id), (error: unknown) => error instanceof ApiError && error.status === 400 && error.code === 'previous_response_not_found' && error.param === 'previous_response_id');
}

describe('ResponsesMemory (a WebSocket connection\'s remembered responses)', () => {
  it('recalls what it remembered and forgets on request', () => {
    const memory = new ResponsesMemory();
    const conversation = turns('hello');
    memory.remember('resp_1', conversation);
    assert.equal(memory.recall('resp_1'), conversation);
    memory.forget('resp_1');
    notFound(memory, 'resp_1');
    notFound(memory, '__proto__');
  });

  it(`keeps the last ${MAX_REMEMBERED_RESPONSES} responses, forgetting the oldest first`, () => {
    const memory = new ResponsesMemory();
    for (let i = 0; i <= MAX_REMEMBERED_RESPONSES; i++) memory.remember(`resp_${i}`, turns(`turn ${i}`));
    assert.equal(memory.size, MAX_REMEMBERED_RESPONSES);
    notFound(memory, 'resp_0');
    assert.equal(memory.recall(`resp_${MAX_REMEMBERED_RESPONSES}`)[0]!.content, `turn ${MAX_REMEMBERED_RESPONSES}`);
  });

  it('keeps at most MAX_REMEMBERED_CHARS of text, and does not keep a conversation larger than that', () => {
    const memory = new ResponsesMemory();
    const third = 'x'.repeat(Math.floor(MAX_REMEMBERED_CHARS / 3) - 100);
    for (const id of ['a', 'b', 'c', 'd']) memory.remember(id, turns(third));
    // Four thirds do not fit: the oldest went.
    notFound(memory, 'a');
    assert.equal(memory.size, 3);
    memory.remember('huge', turns('x'.repeat(MAX_REMEMBERED_CHARS)));
    notFound(memory, 'huge');
    assert.equal(memory.size, 3);
  });
});
