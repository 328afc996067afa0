import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError } from '../../../src/shared/config-values.ts';
import { createNodeToken, hashNodeToken, NodeTokens, parseNodeTokenHashes } from '../../../src/hosted/nodes/node-tokens.ts';

test('a created token is known by its hash only, and names its node', () => {
  const { token, entry } = createNodeToken('gpu-1');
  assert.match(token, /^svc_nt_[A-Za-z0-9_-]{43}$/);
  assert.equal(entry, `gpu-1:sha256:${hashNodeToken(token)}`);
  assert.ok(!entry.includes(token.slice(7)), 'the entry does not hold the token');
  const tokens = new NodeTokens(parseNodeTokenHashes([entry]));
  assert.equal(tokens.nodeFor(token), 'gpu-1');
  assert.equal(tokens.nodeFor(createNodeToken('gpu-1').token), undefined, 'another token with the same name is not it');
  assert.equal(tokens.nodeFor('svc_nt_'), undefined);
  assert.equal(tokens.nodeFor('not-a-token'), undefined);
});

test('gateway entries: repeatable or comma lists; bad, duplicate names and shared hashes are ConfigErrors that never echo the value', () => {
  const one = createNodeToken('a');
  const two = createNodeToken('b');
  assert.deepEqual(parseNodeTokenHashes([`${one.entry},${two.entry}`]).map((e) => e.name), ['a', 'b']);
  assert.deepEqual(parseNodeTokenHashes(undefined), []);
  for (const bad of [[one.token], ['a:sha256:1234'], ['A B:sha256:' + 'a'.repeat(64)], [one.entry, one.entry], [one.entry, one.entry.replace(/^a:/, 'c:')]]) {
    assert.throws(() => parseNodeTokenHashes(bad), (error: unknown) => error instanceof ConfigError && !error.message.includes(one.token));
  }
  assert.throws(() => createNodeToken('Upper'), ConfigError);
});
