/**
 * Stop sequences and tool calls under `tool_choice: "auto"`, on real llama.cpp inference through
 * the daemon: the calling fixture (tiny-gguf.ts `extraPieces`) has node-llama-cpp's call prefix
 * `||call:` as a favoured piece, so its replies write some text and then start a call, whose
 * name and arguments the function-calling grammar constrains. Stops apply to the text before a
 * call: one that matches there ends the reply before any call; characters of a stop that appear
 * only inside a call's arguments never cut the call (docs/runtime.md, Stop sequences).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { callingModelPath, startDaemon, type DaemonProcess } from '../helpers/daemon-process.ts';
import { generateText, type Generation } from '../helpers/text-generation.ts';

let daemon: DaemonProcess;
before(async () => {
  daemon = await startDaemon({ withModel: false, args: ['--model', `calling=${callingModelPath()}`] });
});
after(async () => {
  assert.equal(await daemon.stop(), 0);
});

const tools = [{ type: 'function', function: { name: 'pick', parameters: { type: 'object', properties: { n: { enum: [1, 2, 3] }, tag: { type: 'string', maxLength: 6 } }, required: ['n', 'tag'] } } }];
const body = { model: 'calling', messages: [{ role: 'user', content: 'Do it.' }], tools, max_tokens: 80 };
const SAMPLINGS = [{ temperature: 0 }, ...[1, 2, 3, 4, 5].map((seed) => ({ temperature: 1, seed }))];

/** The reply without stops: text, then a call (the fixture's replies under auto). */
async function plainCall(sampling: object, stream: boolean): Promise<Generation> {
  const plain = await generateText(daemon.url, 'chat/completions', { ...body, ...sampling }, stream);
  assert.equal(plain.finish, 'tool_calls', JSON.stringify(plain));
  assert.equal(plain.toolCalls.length, 1);
  assert.ok(plain.text.length >= 2, JSON.stringify(plain));
  return plain;
}

for (const stream of [false, true]) {
  describe(`tool_choice auto, ${stream ? 'streamed' : 'whole'}`, () => {
    test('stops made of what only the call\'s arguments hold do not cut the call', async () => {
      for (const sampling of SAMPLINGS) {
        const plain = await plainCall(sampling, stream);
        const args = plain.toolCalls[0]!.arguments;
        // Pieces of the arguments that the text before the call does not hold: JSON punctuation,
        // the tag's value, the whole arguments.
        const tag = (JSON.parse(args) as { tag: string }).tag;
        const stops = ['{', '"', args.slice(0, 4), tag, args].filter((s) => s.trim() !== '' && !plain.text.includes(s)).slice(0, 4);
        assert.ok(stops.length >= 3, `${JSON.stringify(stops)} for ${JSON.stringify(plain)}`);
        const stopped = await generateText(daemon.url, 'chat/completions', { ...body, ...sampling, stop: stops }, stream);
        assert.deepEqual(
          { text: stopped.text, finish: stopped.finish, calls: stopped.toolCalls },
          { text: plain.text, finish: 'tool_calls', calls: plain.toolCalls },
          `stops ${JSON.stringify(stops)}`,
        );
      }
    });

    test('a stop in the text before a call ends the reply there, with no call', async () => {
      for (const sampling of SAMPLINGS) {
        const plain = await plainCall(sampling, stream);
        const middle = Math.floor(plain.text.length / 2);
        // One spanning tokens in the middle, the first two characters, the last two (right before the call).
        for (const stop of [plain.text.slice(middle, middle + 3), plain.text.slice(0, 2), plain.text.slice(-2)]) {
          const cut = await generateText(daemon.url, 'chat/completions', { ...body, ...sampling, stop: [stop] }, stream);
          assert.equal(cut.text, plain.text.slice(0, plain.text.indexOf(stop)), `stop ${JSON.stringify(stop)} in ${JSON.stringify(plain.text)}`);
          assert.equal(cut.finish, 'stop');
          assert.deepEqual(cut.toolCalls, []);
        }
      }
    });

    test('text held back for a stop that the call interrupts is still the reply\'s', async () => {
      for (const sampling of SAMPLINGS) {
        const plain = await plainCall(sampling, stream);
        // The end of the text begins this stop, and then the call comes instead of the rest.
        const stop = `${plain.text.slice(-2)}\u0007`;
        const held = await generateText(daemon.url, 'chat/completions', { ...body, ...sampling, stop: [stop] }, stream);
        assert.deepEqual(
          { text: held.text, finish: held.finish, calls: held.toolCalls },
          { text: plain.text, finish: 'tool_calls', calls: plain.toolCalls },
        );
      }
    });
  });
}
