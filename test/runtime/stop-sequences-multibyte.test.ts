/**
 * Stop sequences and max_tokens over characters whose UTF-8 bytes come as separate tokens, on
 * real llama.cpp inference through the daemon: the byte-characters fixture (tiny-gguf.ts
 * `byteCharacters`) writes é, € and 😀 as 2, 3 and 4 `<0xNN>` tokens, the way byte-fallback
 * vocabularies write what they have no piece for. A stop made of such a character, or spanning
 * one and ASCII, must cut exactly where it first matches, and a reply cut by max_tokens inside
 * a character must hold the complete characters of exactly max_tokens tokens: no U+FFFD, no
 * byte lost, nothing from a token past the limit.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { LlamaChat, LlamaCompletion, resolveChatWrapper, type Token } from 'node-llama-cpp';
import { toChatHistory } from '../../src/inference/llama-chat-history.ts';
import { engineSampling } from '../../src/inference/llama-sampling.ts';
import { BYTE_CHARACTERS, byteCharactersModelPath, startDaemon, type DaemonProcess } from '../helpers/daemon-process.ts';
import { generateText, type Generation } from '../helpers/text-generation.ts';
import { tinyVocabulary } from '../helpers/tiny-gguf.ts';
import { disposeTinyLlama, loadTinyLlama } from '../helpers/tiny-llama.ts';

let daemon: DaemonProcess;
before(async () => {
  daemon = await startDaemon({ withModel: false, args: ['--model', `bytes=${byteCharactersModelPath()}`] });
});
after(async () => {
  assert.equal(await daemon.stop(), 0);
});

const MESSAGES = [{ role: 'user' as const, content: 'count with me' }];
const PROMPT = 'Once upon a time';
const endpoints = [
  { path: 'chat/completions' as const, body: { model: 'bytes', messages: MESSAGES } },
  { path: 'completions' as const, body: { model: 'bytes', prompt: PROMPT } },
];
const SAMPLINGS = [{ temperature: 0 }, ...[1, 2, 3, 4, 5, 6, 7, 8].map((seed) => ({ temperature: 1, seed }))];

test('the fixture has no piece for its characters: each comes as one token per UTF-8 byte', () => {
  const { tokens } = tinyVocabulary();
  for (const character of BYTE_CHARACTERS) {
    assert.ok(!tokens.some((t) => t.includes(character)), character);
    for (const b of Buffer.from(character, 'utf8')) assert.ok(tokens.includes(`<0x${b.toString(16).toUpperCase()}>`));
  }
});

describe('a stop made of a multi-byte character, or spanning one and ASCII, cuts exactly at the first match', () => {
  const used = new Set<string>();
  for (const { path, body } of endpoints) {
    for (const stream of [false, true]) {
      test(`${path}, ${stream ? 'streamed' : 'whole'}`, async () => {
        for (const sampling of SAMPLINGS) {
          const plain = await generateText(daemon.url, path, { ...body, ...sampling, max_tokens: 24 }, stream);
          assert.ok(!plain.text.includes('\uFFFD'), JSON.stringify(plain.text));
          const chars = [...plain.text];
          for (const [i, character] of chars.entries()) {
            if (!BYTE_CHARACTERS.includes(character)) continue;
            used.add(character);
            // The character alone; with the character after it (spanning into ASCII or another
            // split character); with the one before it; and one that begins with it but never completes.
            const stops = [character, chars.slice(i, i + 2).join(''), chars.slice(Math.max(0, i - 1), i + 1).join('')];
            for (const stop of stops) {
              const cut = await generateText(daemon.url, path, { ...body, ...sampling, max_tokens: 24, stop: [stop] }, stream);
              assert.equal(cut.text, plain.text.slice(0, plain.text.indexOf(stop)), `stop ${JSON.stringify(stop)} in ${JSON.stringify(plain.text)}`);
              assert.equal(cut.finish, 'stop');
              for (const delta of cut.deltas) assert.ok(!delta.includes('\uFFFD'), JSON.stringify(cut.deltas));
            }
            const held = await generateText(daemon.url, path, { ...body, ...sampling, max_tokens: 24, stop: [`${character}\u0007`] }, stream);
            assert.deepEqual([held.text, held.finish], [plain.text, plain.finish], `held back behind ${JSON.stringify(character)}`);
          }
        }
      });
    }
  }
  test('every character of the fixture was a stop somewhere', () => {
    assert.deepEqual([...used].sort(), [...BYTE_CHARACTERS].sort());
  });
});

/**
 * The tokens the engine generates for a request, and so the reply max_tokens k must give: the
 * text of the first k tokens less a character they end inside of (the common prefix of their
 * text and the text of all the tokens: an incomplete character decodes to U+FFFD there).
 * Generated in this process with node-llama-cpp and the engine's own sampling options, without
 * svc's text handling: the tokens come from onToken, their text from the model's detokenizer.
 */
async function tokensOf(path: string, sampling: { temperature: number; seed?: number }, count: number): Promise<(k: number) => string> {
  const tiny = await loadTinyLlama(1024, byteCharactersModelPath());
  try {
    const tokens: Token[] = [];
    const options = { ...engineSampling(sampling, count), onToken: (t: Token[]) => tokens.push(...t) };
    const sequence = tiny.context.getSequence();
    if (path === 'completions') {
      const completion = new LlamaCompletion({ contextSequence: sequence, autoDisposeSequence: true });
      await completion.generateCompletion(PROMPT, options);
      completion.dispose();
    } else {
      const chat = new LlamaChat({ contextSequence: sequence, chatWrapper: resolveChatWrapper(tiny.model), autoDisposeSequence: true });
      await chat.generateResponse(toChatHistory(MESSAGES), options);
      chat.dispose();
    }
    const all = tiny.model.detokenize(tokens);
    const texts = Array.from({ length: tokens.length + 1 }, (_, k) => commonPrefix(tiny.model.detokenize(tokens.slice(0, k)), all));
    return (k) => {
      assert.ok(k < tokens.length, `only ${tokens.length} tokens came back`);
      return texts[k]!;
    };
  } finally {
    await disposeTinyLlama(tiny);
  }
}

function commonPrefix(a: string, b: string): string {
  let i = 0;
  while (i < a.length && a[i] === b[i]) i++;
  // Never half of a surrogate pair.
  if (i > 0 && a.charCodeAt(i - 1) >= 0xd800 && a.charCodeAt(i - 1) <= 0xdbff) i--;
  return a.slice(0, i);
}

describe('max_tokens ending inside a character: the complete characters of exactly max_tokens tokens', () => {
  /** Runs every limit 1…24 for the first samplings; `check` sees each reply and what it should be. */
  async function eachLimit(path: 'chat/completions' | 'completions', check: (out: Generation, expected: string, what: string) => void): Promise<void> {
    const body = endpoints.find((e) => e.path === path)!.body;
    let inside = 0;
    for (const sampling of SAMPLINGS.slice(0, 4)) {
      const expected = await tokensOf(path, sampling, 40);
      for (let k = 1; k <= 24; k++) {
        if (expected(k).length === expected(k - 1).length && expected(k + 1).length > expected(k).length) inside++;
        for (const stream of [false, true]) {
          const out = await generateText(daemon.url, path, { ...body, ...sampling, max_tokens: k }, stream);
          const what = `max_tokens ${k}, ${JSON.stringify(sampling)}, ${stream ? 'streamed' : 'whole'}`;
          assert.ok(!out.text.includes('\uFFFD'), what);
          assert.equal(out.finish, 'length', what);
          assert.equal(out.completionTokens, k, what);
          check(out, expected(k), what);
        }
      }
    }
    // The checks are only worth something if some of those limits fell inside a character.
    assert.ok(inside >= 3, `${inside} limits inside a character`);
  }

  test('chat/completions: exactly that text', () => eachLimit('chat/completions', (out, expected, what) => assert.equal(out.text, expected, what)));

  // node-llama-cpp's LlamaCompletion (3.22) holds a token whose own text ends inside a character
  // until the next one, skips its maxTokens check meanwhile (sampling a token past the limit:
  // `…€m`, 13 tokens for max_tokens 12), and never releases what it holds when maxTokens ends the
  // generation: the last tokens allowed completing a character whose bytes it held (😀's four
  // come in two held pairs), or following one with tokens whose own text is empty (a lone `▁`),
  // were left out (`…H` for `…H😀 `). svc runs its own token loop instead (plain-completion.ts).
  test('completions: exactly that text', () => eachLimit('completions', (out, expected, what) => assert.equal(out.text, expected, what)));
});
