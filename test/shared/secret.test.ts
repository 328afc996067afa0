import assert from 'node:assert/strict';
import { inspect, format } from 'node:util';
import { test } from 'node:test';
import pino from 'pino';
import { Secret } from '../../src/shared/secret.ts';

test('a Secret shows [redacted] wherever it is printed, and its value only through reveal()', () => {
  const secret = new Secret('sk-abc123');
  const holder = { upstream: { name: 'x', apiKey: secret }, list: [secret] };
  assert.equal(secret.reveal(), 'sk-abc123');
  for (const shown of [JSON.stringify(holder), inspect(holder, { depth: 10 }), format('%s %o %j', secret, holder, holder), `${String(secret)}`]) {
    assert.ok(!shown.includes('sk-abc123'), shown);
    assert.match(shown, /\[redacted\]/);
  }
  let logged = '';
  const log = pino({ level: 'info' }, { write: (line: string) => { logged += line; } });
  log.info(holder, 'config');
  assert.ok(!logged.includes('sk-abc123'));
  assert.match(logged, /\[redacted\]/);
});
