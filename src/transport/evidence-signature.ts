import { sign, verify, type KeyObject } from 'node:crypto';
import canonicalize from 'canonicalize';
import type { TransportIdentity } from './transport-identity.ts';
import { keyIdOf } from './transport-identity.ts';

/**
 * ML-DSA's context string (FIPS 204 §5.2) for route evidence: a signature made for a `svc_route`
 * record can never be passed off as one over another kind of message, and vice versa.
 */
export const EVIDENCE_CONTEXT = 'svc_route/v1';

/** The fields signing adds to a record; `signature` is the only one not itself signed. */
export interface EvidenceSignatureFields {
  signature_alg: string;
  /** Named apart from the API key's `key_id` beside it in GET /evidence/:id. */
  signing_key_id: string;
  /** base64url ML-DSA signature over the RFC 8785 (JCS) form of the record without `signature`. */
  signature: string;
}

/** The bytes that are signed: the record in RFC 8785 canonical JSON, `signature` left out. */
function signedBytes(record: Record<string, unknown>): Buffer {
  const { signature: _ignored, ...rest } = record;
  const text = canonicalize(rest);
  if (text === undefined) throw new Error('the evidence record has no JSON form');
  return Buffer.from(text, 'utf8');
}

/** Signs `record` (a `svc_route`) with the ML-DSA identity: the record comes back with the three signature fields. */
export function signEvidence<T extends object>(record: T, identity: Pick<TransportIdentity, 'algorithm' | 'keyId' | 'privateKey'>): T & EvidenceSignatureFields {
  const withKey = { ...record, signature_alg: identity.algorithm, signing_key_id: identity.keyId };
  const signature = sign(null, signedBytes(withKey), { key: identity.privateKey, context: Buffer.from(EVIDENCE_CONTEXT) }).toString('base64url');
  return { ...withKey, signature };
}

export type EvidenceVerdict = { valid: true; keyId: string; algorithm: string } | { valid: false; reason: string };

/**
 * Checks a signed record against a public key, offline: the key must be the one the record names
 * (`signing_key_id`), of the algorithm it names, and the signature must cover the record as it is now.
 */
export function verifyEvidence(record: Record<string, unknown>, publicKey: KeyObject): EvidenceVerdict {
  const { signature, signing_key_id: keyId, signature_alg: algorithm } = record;
  if (typeof signature !== 'string' || typeof keyId !== 'string' || typeof algorithm !== 'string') {
    return { valid: false, reason: 'the record is not signed (no signature, signing_key_id and signature_alg)' };
  }
  if (keyIdOf(publicKey) !== keyId) return { valid: false, reason: `the record was signed by key ${keyId}, not by this public key (${keyIdOf(publicKey)})` };
  if (publicKey.asymmetricKeyType !== algorithm) return { valid: false, reason: `the record names ${algorithm}, but the key is ${publicKey.asymmetricKeyType ?? 'unknown'}` };
  const ok = verify(null, signedBytes(record), { key: publicKey, context: Buffer.from(EVIDENCE_CONTEXT) }, Buffer.from(signature, 'base64url'));
  return ok ? { valid: true, keyId, algorithm } : { valid: false, reason: 'the signature does not match the record: it was changed after signing, or signed by another key' };
}
