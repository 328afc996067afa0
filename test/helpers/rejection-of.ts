import assert from 'node:assert/strict';

/** The error `promise` rejects with, asserted to be a `type` (a client's APIError, say); fails the test if it resolves. */
export async function rejectionOf<E extends Error>(promise: Promise<unknown>, type: abstract new (...args: never[]) => E): Promise<E> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof type, `expected an ${type.name}, got ${String(error)}`);
    return error;
  }
  assert.fail('expected an error');
}
