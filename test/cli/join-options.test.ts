import assert from 'node:assert/strict';
import { test } from 'node:test';
import { resolveJoinSettings } from '../../src/cli/join-options.ts';
import { createNodeToken } from '../../src/hosted/nodes/node-tokens.ts';
import { ConfigError } from '../../src/shared/config-values.ts';

const { token } = createNodeToken('gpu-1');

test('--join with its token and advertise URL; the listener defaults to every interface on the advertised port', () => {
  const settings = resolveJoinSettings({ join: 'https://gw.example/', nodeToken: token, advertiseUrl: 'http://10.0.0.7:11460/' }, false)!;
  assert.equal(settings.gateway, 'https://gw.example');
  assert.equal(settings.advertiseUrl, 'http://10.0.0.7:11460');
  assert.equal(settings.listenHost, '0.0.0.0');
  assert.equal(settings.listenPort, 11460);
  assert.equal(settings.token.reveal(), token);
  assert.equal(JSON.stringify(settings).includes(token), false, 'the token is a Secret: never in JSON or logs');
  const v6 = resolveJoinSettings({ join: 'http://gw', nodeToken: token, advertiseUrl: 'http://[fd00::7]:9000', nodeListen: '[::]:9001' }, false)!;
  assert.equal(v6.listenHost, '::');
  assert.equal(v6.listenPort, 9001);
  assert.equal(resolveJoinSettings({}, false), undefined);
});

test('what does not fit together is one ConfigError line, never echoing the token', () => {
  const cases = [
    { nodeToken: token },
    { join: 'http://gw' , advertiseUrl: 'http://n:1' },
    { join: 'http://gw', nodeToken: 'wrong-prefix-secret', advertiseUrl: 'http://n:1' },
    { join: 'ftp://gw', nodeToken: token, advertiseUrl: 'http://n:1' },
    { join: 'http://gw', nodeToken: token },
    { join: 'http://gw', nodeToken: token, advertiseUrl: 'http://user:pw@n:1' },
    { join: 'http://gw', nodeToken: token, advertiseUrl: 'http://n:1', nodeListen: 'nowhere' },
  ];
  for (const raw of cases) {
    assert.throws(() => resolveJoinSettings(raw, false), (error: unknown) => error instanceof ConfigError && !error.message.includes(token) && !error.message.includes('wrong-prefix-secret'));
  }
  assert.throws(() => resolveJoinSettings({ join: 'http://gw', nodeToken: token, advertiseUrl: 'http://n:1' }, true), /pqc-transport/);
});
