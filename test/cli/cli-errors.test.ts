/**
 * Every CLI error is one clear line on stderr and a non-zero exit: known errors print their
 * message, anything else one line and a pointer to SVC_DEBUG=1, which adds the stack.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { debugRequested, reportCliError } from '../../src/cli/cli-errors.ts';
import { ConfigError } from '../../src/shared/config-values.ts';
import { ApiError } from '../../src/shared/api-error.ts';
import { UserError } from '../../src/shared/user-error.ts';
import { runCliToEnd } from '../helpers/daemon-process.ts';

const run = runCliToEnd;

const lines = (text: string): string[] => text.split('\n').filter((l) => l !== '');
const STACK_FRAME = /^\s+at /m;

describe('the svc command', () => {
  test('svc models list --model /nonexistent.gguf: one line naming the file, exit 1', async () => {
    const result = await run(['models', 'list', '--model', '/nonexistent.gguf']);
    assert.equal(result.code, 1);
    assert.deepEqual(lines(result.stderr), ['svc models list: Model file not found: /nonexistent.gguf']);
  });

  test('a file-system error is one line (a data directory that is a file)', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'svc-cli-')), 'not-a-dir');
    writeFileSync(file, 'x');
    const result = await run(['serve', '--port', '0', '--data-dir', file]);
    assert.equal(result.code, 1);
    assert.equal(lines(result.stderr).length, 1, result.stderr);
    assert.match(result.stderr, /^svc serve: cannot start: ENOTDIR: not a directory, mkdir '.*not-a-dir.*'\n$/);
  });

  test('svc serve with a missing model: one line on stderr, exit 1', async () => {
    const result = await run(['serve', '--port', '0', '--model', '/nonexistent/missing.gguf', '--data-dir', mkdtempSync(join(tmpdir(), 'svc-cli-'))]);
    assert.equal(result.code, 1);
    assert.deepEqual(lines(result.stderr), ['svc serve: cannot start: Model file not found: /nonexistent/missing.gguf']);
    assert.doesNotMatch(result.stdout, /\\n\s+at /, 'no stack in the log either');
  });

  test('svc serve --host 0.0.0.0: one line that names only what exists, exit 2', async () => {
    const result = await run(['serve', '--host', '0.0.0.0', '--port', '0']);
    assert.equal(result.code, 2);
    assert.equal(lines(result.stderr).length, 1);
    assert.match(result.stderr, /^svc serve: --host 0\.0\.0\.0: .*loopback addresses only/);
    assert.doesNotMatch(result.stderr, /svc hosted/);
  });

  test('a usage error is a line and a pointer to --help, not the whole help text', async () => {
    for (const args of [['models', 'list', '--bogus'], ['nonsense'], ['serve', '--threads']]) {
      const result = await run(args);
      assert.equal(result.code, 1, args.join(' '));
      assert.deepEqual(lines(result.stderr).slice(1), ['(add --help for usage)'], result.stderr);
      assert.match(lines(result.stderr)[0]!, /^error: /);
    }
  });

  test('SVC_DEBUG=1 adds the stack', async () => {
    const result = await run(['models', 'list', '--model', '/nonexistent.gguf'], { SVC_DEBUG: '1' });
    assert.equal(result.code, 1);
    assert.equal(lines(result.stderr)[0], 'svc models list: Model file not found: /nonexistent.gguf');
    assert.match(result.stderr, STACK_FRAME);
  });
});

describe('reportCliError', () => {
  const report = (error: unknown, debug = false) => {
    let text = '';
    const code = reportCliError(error, 'models list', { write: (t) => { text += t; }, debug });
    return { code, text };
  };

  test('errors written for the user: their message and their exit code', () => {
    assert.deepEqual(report(new UserError('No such model.')), { code: 1, text: 'svc models list: No such model.\n' });
    assert.deepEqual(report(new ConfigError('--port: bad.')), { code: 2, text: 'svc models list: --port: bad.\n' });
    assert.deepEqual(report(ApiError.invalidRequest('Unknown solver "x".')), { code: 1, text: 'svc models list: Unknown solver "x".\n' });
    // A message spread over lines still prints as one.
    assert.equal(report(new UserError('first\n  second')).text, 'svc models list: first second\n');
  });

  test('anything else: one line and the SVC_DEBUG pointer; with SVC_DEBUG the stack and causes', () => {
    const bug = new TypeError('cannot read properties of undefined', { cause: new Error('the root cause') });
    const plain = report(bug);
    assert.equal(plain.code, 1);
    assert.deepEqual(lines(plain.text), ['svc models list: unexpected error: TypeError: cannot read properties of undefined (run with SVC_DEBUG=1 for details)']);
    const detailed = report(bug, true);
    assert.match(detailed.text, /^svc models list: unexpected error: TypeError: cannot read properties of undefined\n/);
    assert.match(detailed.text, STACK_FRAME);
    assert.match(detailed.text, /caused by:\nError: the root cause/);
    // A 5xx ApiError hides its cause on the wire; on the terminal it is "unexpected" too.
    assert.match(report(ApiError.internal(new Error('x'))).text, /unexpected error: .*SVC_DEBUG=1/);
    assert.match(report('a string').text, /unexpected error: a string/);
    assert.match(reportCliErrorWithoutCommand(), /^svc: /);
  });

  test('SVC_DEBUG values', () => {
    assert.equal(debugRequested({}), false);
    assert.equal(debugRequested({ SVC_DEBUG: '' }), false);
    assert.equal(debugRequested({ SVC_DEBUG: '0' }), false);
    assert.equal(debugRequested({ SVC_DEBUG: 'false' }), false);
    assert.equal(debugRequested({ SVC_DEBUG: '1' }), true);
    assert.equal(debugRequested({ SVC_DEBUG: 'yes' }), true);
  });
});

function reportCliErrorWithoutCommand(): string {
  let text = '';
  reportCliError(new UserError('x'), '', { write: (t) => { text += t; }, debug: false });
  return text;
}
