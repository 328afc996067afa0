import type { Hash } from 'node:crypto';
import { open, rename } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { fsError, removeQuietly, sizeOf } from './partial-download.ts';
import { PullError } from './pull-error.ts';

/** A transfer that has every byte in its partial file, to be checked and put in place. */
export interface FinishedTransfer {
  dest: string;
  partial: string;
  metaPath: string;
  /** The sha256 of every byte in the partial, not yet digested. */
  hash: Hash;
  expectedSize: number | undefined;
  /** Lowercase hex, where the source publishes one. */
  expectedSha: string | undefined;
  /** Refuse a file that does not start with `GGUF` unless false. */
  requireGgufMagic: boolean | undefined;
}

/**
 * Checks the partial's size, its sha256 (where one is expected) and the GGUF magic, deleting it
 * when any is wrong; then fsyncs it and renames it into place, so a killed pull never leaves a
 * file that looks like a model. Returns its size and sha256.
 */
export async function verifyAndPlace(done: FinishedTransfer): Promise<{ bytes: number; sha256: string }> {
  const name = basename(done.dest);
  const discard = async () => {
    await removeQuietly(done.partial);
    await removeQuietly(done.metaPath);
  };
  const size = await sizeOf(done.partial);
  if (done.expectedSize !== undefined && size !== done.expectedSize) {
    await discard();
    throw new PullError('size_mismatch', `${name}: downloaded ${size} bytes, expected ${done.expectedSize}; the partial download was deleted, run the command again`);
  }
  const sha256 = done.hash.digest('hex');
  if (done.expectedSha !== undefined && sha256 !== done.expectedSha) {
    await discard();
    throw new PullError('checksum_mismatch', `${name}: sha256 mismatch (expected ${done.expectedSha}, got ${sha256}); the partial download was deleted, run the command again`);
  }
  const file = await open(done.partial, 'r');
  try {
    if (done.requireGgufMagic !== false) {
      const { bytesRead, buffer } = await file.read(Buffer.alloc(4), 0, 4, 0);
      if (bytesRead !== 4 || buffer.toString('latin1') !== 'GGUF') {
        await discard();
        const start = JSON.stringify(buffer.subarray(0, bytesRead).toString('latin1').replace(/[^\x20-\x7e]/g, '?'));
        throw new PullError('not_gguf', `${name} is not a GGUF model (it starts with ${start}, not "GGUF"); nothing was kept`);
      }
    }
    await file.sync();
  } finally {
    await file.close();
  }
  try {
    await rename(done.partial, done.dest);
  } catch (error) {
    throw fsError(error, done.dest, 'placing');
  }
  // The rename is durable only once the directory entry is on disk too.
  const dir = await open(dirname(done.dest), 'r');
  try {
    await dir.sync();
  } finally {
    await dir.close();
  }
  await removeQuietly(done.metaPath);
  return { bytes: size, sha256 };
}
