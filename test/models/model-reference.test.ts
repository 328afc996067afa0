import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseModelReference } from '../../src/models/model-reference.ts';
import { PullError } from '../../src/models/pull-error.ts';

const hub = { hubEndpoint: 'https://huggingface.co' };

test('hub file references, with and without .gguf, in subfolders and Ollama spelling', () => {
  assert.deepEqual(parseModelReference('hf:Qwen/Qwen2.5-0.5B-Instruct-GGUF/qwen2.5-0.5b-instruct-q4_k_m.gguf', hub), {
    kind: 'hub-file', owner: 'Qwen', repo: 'Qwen2.5-0.5B-Instruct-GGUF', file: 'qwen2.5-0.5b-instruct-q4_k_m.gguf', revision: undefined,
  });
  assert.equal((parseModelReference('hf:a/b/model-q8_0', hub) as { file: string }).file, 'model-q8_0.gguf');
  assert.equal((parseModelReference('hf:a/b/Q4_K_M/m-00001-of-00002.gguf', hub) as { file: string }).file, 'Q4_K_M/m-00001-of-00002.gguf');
  assert.deepEqual(parseModelReference('hf:a/b:q4_k_m', { ...hub, revision: 'v2' }), { kind: 'hub-quant', owner: 'a', repo: 'b', tag: 'q4_k_m', revision: 'v2' });
  assert.deepEqual(parseModelReference('hf:a/b', hub), { kind: 'hub-quant', owner: 'a', repo: 'b', tag: undefined, revision: undefined });
  assert.deepEqual(parseModelReference('hf.co/a/b:Q8_0', hub), { kind: 'hub-quant', owner: 'a', repo: 'b', tag: 'Q8_0', revision: undefined });
  assert.deepEqual(parseModelReference('a/b', hub), { kind: 'hub-repo', owner: 'a', repo: 'b', revision: undefined });
});

test('URLs: plain ones keep their file name; hub resolve/blob URLs become hub files with their revision', () => {
  const plain = parseModelReference('https://example.com/files/My%20Model.Q4_0.gguf?download=1', hub);
  assert.equal(plain.kind, 'url');
  assert.equal((plain as { fileName: string }).fileName, 'My Model.Q4_0.gguf');
  assert.deepEqual(parseModelReference('https://huggingface.co/a/b/resolve/main/x/y.gguf', hub), { kind: 'hub-file', owner: 'a', repo: 'b', file: 'x/y.gguf', revision: 'main' });
  assert.deepEqual(parseModelReference('http://127.0.0.1:9/hf/a/b/blob/abc/y.gguf', { hubEndpoint: 'http://127.0.0.1:9/hf/' }), {
    kind: 'hub-file', owner: 'a', repo: 'b', file: 'y.gguf', revision: 'abc',
  });
});

test('malformed references are one-line invalid_reference errors naming the accepted forms', () => {
  for (const bad of ['', 'hf:', 'hf:a', 'hf:a/', 'hf:../b/x.gguf', 'hf:a/b/../x.gguf', 'hf:a/b/x//y.gguf', 'hf:a--b/c', 'hf:a/b:', 'hf:a/b:Q4 K',
    'https://example.com/', 'https://example.com/readme.txt', 'https://example.com/.gguf', 'ftp://x/y.gguf', 'just-a-name', 'a/b/c', 'https://[bad', `${hub.hubEndpoint}/a/b/resolve/main/x%zz.gguf`, `${hub.hubEndpoint}/a%zz/b/resolve/main/x.gguf`]) {
    assert.throws(() => parseModelReference(bad, hub), (error: unknown) => {
      assert.ok(error instanceof PullError, `${bad}: ${String(error)}`);
      assert.equal(error.code, 'invalid_reference');
      assert.match(error.message, /hf:owner\/repo/);
      assert.doesNotMatch(error.message, /\n/);
      return true;
    }, bad);
  }
});
