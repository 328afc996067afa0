/**
 * End to end: a streamed chat sends each token as its own SSE event (no coalescing), and
 * concurrent streams through one daemon get the same text as the same request alone
 * (batched decoding changes nothing in the output). Real daemon, real llama.cpp on the tiny
 * fixture, read with node:http so every event is seen as sent.
 */
import assert from 'node:assert/strict';
import { Agent, request } from 'node:http';
import { after, before, test } from 'node:test';
import { startDaemon, type DaemonProcess } from '../helpers/daemon-process.ts';

let daemon: DaemonProcess;
const agent = new Agent({ keepAlive: true });

before(async () => {
  daemon = await startDaemon();
});
after(async () => {
  agent.destroy();
  assert.equal(await daemon.stop(), 0);
});

interface Streamed {
  contents: string[];
  finish: string | undefined;
  completionTokens: number | undefined;
}

function streamChat(content: string, maxTokens: number): Promise<Streamed> {
  const body = JSON.stringify({
    model: 'tiny',
    messages: [{ role: 'user', content }],
    max_tokens: maxTokens,
    temperature: 0,
    stream: true,
    stream_options: { include_usage: true },
  });
  return new Promise((resolve, reject) => {
    const req = request(`${daemon.url}/v1/chat/completions`, {
      method: 'POST',
      agent,
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
    }, (res) => {
      assert.equal(res.statusCode, 200);
      res.setEncoding('utf8');
      let buffer = '';
      const result: Streamed = { contents: [], finish: undefined, completionTokens: undefined };
      res.on('data', (data: string) => {
        buffer += data;
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const event = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          if (event === 'data: [DONE]') continue;
          const chunk = JSON.parse(event.slice('data: '.length)) as {
            choices: { delta: { content?: string }; finish_reason: string | null }[];
            usage?: { completion_tokens: number };
          };
          const choice = chunk.choices[0];
          if (choice?.delta.content !== undefined && choice.delta.content !== '') result.contents.push(choice.delta.content);
          if (choice?.finish_reason != null) result.finish = choice.finish_reason;
          if (chunk.usage !== undefined) result.completionTokens = chunk.usage.completion_tokens;
        }
      });
      res.on('end', () => resolve(result));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

test('a streamed chat sends one content event per generated token', async () => {
  const streamed = await streamChat('Tell me a long story.', 48);
  assert.equal(streamed.finish, 'length');
  assert.equal(streamed.completionTokens, 48);
  // The fixture's greedy reply is whole characters with no stop-sequence prefix, so nothing
  // is held back: 48 tokens, 48 events.
  assert.equal(streamed.contents.length, 48, `events: ${JSON.stringify(streamed.contents)}`);
});

test('four concurrent streams get the same text as each request alone', async () => {
  const questions = ['First question.', 'Second question, longer than the first.', 'Third.', 'A fourth question.'];
  const alone: string[] = [];
  for (const q of questions) alone.push((await streamChat(q, 40)).contents.join(''));
  // Batched and single decodes agree bit for bit on this fixture with llama.cpp's CPU kernels;
  // a sequence mixed up with another in a batch would not.
  const together = await Promise.all(questions.map((q) => streamChat(q, 40)));
  assert.deepEqual(together.map((s) => s.contents.join('')), alone);
  for (const s of together) assert.equal(s.contents.length, s.completionTokens);
});
