import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parsePqcTransport, PqcTransportError } from '../../src/transport/pqc-transport-options.ts';

test('pqc transport: the contract\'s example list, comma lists and repeats, in any case', () => {
  const t = parsePqcTransport(['ML-KEM-768, ml-dsa-65']);
  assert.deepEqual(t, { names: ['ml-kem-768', 'ml-dsa-65'], kems: ['ml-kem-768'], groups: ['X25519MLKEM768', 'MLKEM768'], signature: 'ml-dsa-65' });
  assert.deepEqual(parsePqcTransport(['ml-dsa-65', 'ml-kem-768', 'ml-kem-768'])?.names, ['ml-kem-768', 'ml-dsa-65']);
  assert.deepEqual(parsePqcTransport('ml-kem-1024,ml-kem-768')?.groups, ['SecP384r1MLKEM1024', 'MLKEM1024', 'X25519MLKEM768', 'MLKEM768']);
});

test('pqc transport: off when empty or none; a signature alone still gets ML-KEM-768, never a classical exchange', () => {
  assert.equal(parsePqcTransport(undefined), undefined);
  assert.equal(parsePqcTransport([]), undefined);
  assert.equal(parsePqcTransport('none'), undefined);
  assert.equal(parsePqcTransport([' , ']), undefined);
  const t = parsePqcTransport('ml-dsa-87');
  assert.deepEqual(t?.kems, ['ml-kem-768']);
  assert.deepEqual(t?.names, ['ml-kem-768', 'ml-dsa-87']);
  assert.equal(parsePqcTransport('ml-kem-768')?.signature, undefined);
});

test('pqc transport: later algorithms are refused naming their version and what is supported; unknown names too', () => {
  const cases: [string, RegExp][] = [
    ['slh-dsa-sha2-128s', /SLH-DSA is a v1\.1 transport feature/],
    ['fn-dsa-512', /FN-DSA is planned for v1\.2/],
    ['falcon-512', /FN-DSA is planned for v1\.2/],
    ['classic-mceliece-348864', /code-based KEMs are under evaluation/],
    ['hqc-128', /code-based KEMs are under evaluation/],
    ['kyber768', /unknown algorithm/],
    ['toString', /unknown algorithm/],
  ];
  for (const [value, why] of cases) {
    assert.throws(() => parsePqcTransport(`ml-kem-768,${value}`), (error: unknown) => {
      assert.ok(error instanceof PqcTransportError);
      assert.match(error.message, why);
      assert.match(error.message, /Supported: ml-kem-768, ml-kem-1024, ml-dsa-44, ml-dsa-65, ml-dsa-87/);
      return true;
    }, value);
  }
  assert.throws(() => parsePqcTransport('ml-dsa-44,ml-dsa-65'), /one signature algorithm at a time/);
  assert.throws(() => parsePqcTransport('none,ml-kem-768'), /'none' cannot be combined/);
});
