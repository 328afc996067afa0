import { UserError } from '../shared/user-error.ts';

/** An ML-DSA parameter set, as `--pqc-transport` and Node's `generateKeyPairSync` name it. */
export type MlDsaName = 'ml-dsa-44' | 'ml-dsa-65' | 'ml-dsa-87';
/** An ML-KEM parameter set, as `--pqc-transport` names it. */
export type MlKemName = 'ml-kem-768' | 'ml-kem-1024';

/**
 * TLS 1.3 key-exchange groups (OpenSSL 3.5 names) each ML-KEM choice allows, most preferred
 * first: the hybrid with a classical curve (what Chrome, Firefox, Go and rustls offer today),
 * then pure ML-KEM for clients that ask for it alone.
 */
const KEM_GROUPS = new Map<MlKemName, readonly string[]>([
  ['ml-kem-768', ['X25519MLKEM768', 'MLKEM768']],
  ['ml-kem-1024', ['SecP384r1MLKEM1024', 'MLKEM1024']],
]);
const SIGNATURES: readonly MlDsaName[] = ['ml-dsa-44', 'ml-dsa-65', 'ml-dsa-87'];

/** What the contract's transport versions promise later, and why each is refused now. */
const LATER: readonly { pattern: RegExp; why: string }[] = [
  { pattern: /^(slh-?dsa|sphincs)/, why: 'SLH-DSA is a v1.1 transport feature' },
  { pattern: /^(fn-?dsa|falcon)/, why: 'FN-DSA is planned for v1.2' },
  { pattern: /^(classic-?mceliece|mceliece|hqc|bike)/, why: 'code-based KEMs are under evaluation' },
];

/** `--pqc-transport`, checked: which KEM groups TLS offers and which ML-DSA key signs. */
export interface PqcTransport {
  /** The active list, as health reports it (`pqc_transport`): the KEMs, then the signature. */
  names: string[];
  kems: MlKemName[];
  /** TLS 1.3 groups the server accepts, most preferred first; nothing classical. */
  groups: string[];
  /** The identity's algorithm: the TLS certificate's key and the one that signs evidence. Undefined: an ECDSA P-256 certificate and no signatures. */
  signature: MlDsaName | undefined;
}

export class PqcTransportError extends UserError {
  override name = 'PqcTransportError';
  constructor(message: string) {
    super(message, { exitCode: 2 });
  }
}

export const SUPPORTED_PQC_NAMES: readonly string[] = [...KEM_GROUPS.keys(), ...SIGNATURES];

/**
 * Reads `--pqc-transport` values (each may be a comma list): `ml-kem-768,ml-dsa-65`. `none` or
 * nothing turns the transport off (undefined). Without an ML-KEM name, ML-KEM-768 is used: a TLS
 * transport called post-quantum must not fall back to a classical key exchange.
 */
export function parsePqcTransport(values: readonly string[] | string | undefined): PqcTransport | undefined {
  const items = (typeof values === 'string' ? [values] : values ?? [])
    .flatMap((v) => v.split(','))
    .map((v) => v.trim().toLowerCase())
    .filter((v) => v !== '');
  if (items.length === 0 || (items.length === 1 && items[0] === 'none')) return undefined;
  const kems: MlKemName[] = [];
  let signature: MlDsaName | undefined;
  for (const item of items) {
    if (item === 'none') throw new PqcTransportError(`--pqc-transport: 'none' cannot be combined with other values.`);
    const kem = [...KEM_GROUPS.keys()].find((k) => k === item);
    if (kem !== undefined) {
      if (!kems.includes(kem)) kems.push(kem);
      continue;
    }
    const sig = SIGNATURES.find((s) => s === item);
    if (sig !== undefined) {
      if (signature !== undefined && signature !== sig) throw new PqcTransportError(`--pqc-transport: one signature algorithm at a time (${signature} and ${sig} were given).`);
      signature = sig;
      continue;
    }
    const later = LATER.find((l) => l.pattern.test(item));
    const supported = SUPPORTED_PQC_NAMES.join(', ');
    throw new PqcTransportError(later !== undefined
      ? `--pqc-transport ${item}: not supported in this version (${later.why}). Supported: ${supported}.`
      : `--pqc-transport ${item}: unknown algorithm. Supported: ${supported}.`);
  }
  if (kems.length === 0) kems.push('ml-kem-768');
  return {
    names: [...kems, ...(signature === undefined ? [] : [signature])],
    kems,
    groups: kems.flatMap((k) => KEM_GROUPS.get(k) ?? []),
    signature,
  };
}
