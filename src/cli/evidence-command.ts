import { createPublicKey, X509Certificate, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { isRecord } from '../shared/is-record.ts';
import { UserError } from '../shared/user-error.ts';
import { verifyEvidence } from '../transport/evidence-signature.ts';

class EvidenceInputError extends UserError {
  override name = 'EvidenceInputError';
  constructor(message: string) {
    super(message, { exitCode: 2 });
  }
}

function readText(path: string): string {
  try {
    return path === '-' ? readFileSync(0, 'utf8') : readFileSync(path, 'utf8');
  } catch (error) {
    throw new EvidenceInputError(`${path}: cannot read it (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}).`);
  }
}

/**
 * The public key from what a user has at hand: a PEM public key, the PEM certificate from the
 * data dir, or the JSON of GET /transport/identity saved to a file.
 */
export function publicKeyFrom(text: string, path: string): KeyObject {
  const trimmed = text.trim();
  try {
    if (trimmed.startsWith('{')) {
      const identity: unknown = JSON.parse(trimmed);
      if (isRecord(identity) && typeof identity.public_key === 'string') return createPublicKey(identity.public_key);
      throw new Error('a JSON file must be what GET /transport/identity returns (with public_key)');
    }
    if (trimmed.includes('BEGIN CERTIFICATE')) return new X509Certificate(trimmed).publicKey;
    return createPublicKey(trimmed);
  } catch (error) {
    throw new EvidenceInputError(`${path}: not a public key, certificate or identity document (${(error as Error).message}).`);
  }
}

/** A saved SSE transcript (`data: {…}` lines) as the list of its JSON events; undefined if it is not one. */
export function sseEvents(text: string): unknown[] | undefined {
  const lines = text.split(/\r?\n/).filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trim()).filter((d) => d !== '[DONE]');
  if (lines.length === 0) return undefined;
  try {
    return lines.map((d) => JSON.parse(d) as unknown);
  } catch {
    return undefined;
  }
}

/** The `svc_route` records in a document: a chat completion, a GET /evidence/:id answer, a bare record, or a list of those. */
export function routeRecordsOf(document: unknown): Record<string, unknown>[] {
  if (Array.isArray(document)) return document.flatMap(routeRecordsOf);
  if (!isRecord(document)) return [];
  if (isRecord(document.svc_route)) return [document.svc_route];
  return typeof document.evidence_id === 'string' ? [document] : [];
}

/** `svc evidence verify`: checks signed route evidence offline, against a public key the user holds. */
export function registerEvidenceCommand(program: Command): void {
  const evidence = program.command('evidence').description('route evidence (svc_route) of the hosted tier');
  evidence
    .command('verify')
    .description('check the ML-DSA signature of svc_route records offline: a chat completion, a saved stream (SSE), a GET /evidence/:id answer, a bare record or a list, from a file or - for stdin')
    .argument('<file>', 'JSON document or SSE transcript holding svc_route records, or - for stdin')
    .requiredOption('--public-key <file>', 'the signing key: a PEM public key, the identity certificate (<data-dir>/transport/identity-ml-dsa-65.crt) or the saved JSON of GET /transport/identity')
    .option('--json', 'one JSON line per record')
    .action((file: string, options: { publicKey: string; json?: boolean }) => {
      const publicKey = publicKeyFrom(readText(options.publicKey), options.publicKey);
      const text = readText(file);
      let document: unknown;
      try {
        document = JSON.parse(text);
      } catch (error) {
        document = sseEvents(text);
        if (document === undefined) throw new EvidenceInputError(`${file}: neither JSON nor an SSE transcript (${(error as Error).message}).`);
      }
      const records = routeRecordsOf(document);
      if (records.length === 0) throw new EvidenceInputError(`${file}: no svc_route record in it (a record has an evidence_id).`);
      let invalid = 0;
      for (const record of records) {
        const verdict = verifyEvidence(record, publicKey);
        const id = typeof record.evidence_id === 'string' ? record.evidence_id : '(no evidence_id)';
        if (!verdict.valid) invalid++;
        if (options.json === true) {
          process.stdout.write(`${JSON.stringify({ evidence_id: id, ...(verdict.valid ? { valid: true, signing_key_id: verdict.keyId, signature_alg: verdict.algorithm } : { valid: false, reason: verdict.reason }) })}\n`);
        } else {
          process.stdout.write(verdict.valid ? `valid    ${id}: signed by ${verdict.algorithm} key ${verdict.keyId}\n` : `INVALID  ${id}: ${verdict.reason}\n`);
        }
      }
      // 1: a record failed verification (as `gpg --verify` and `cosign verify` answer); 2: bad input.
      if (invalid > 0) process.exitCode = 1;
    });
}
