import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, randomBytes, X509Certificate, type KeyObject } from 'node:crypto';
import { chmodSync, linkSync, mkdirSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { join } from 'node:path';
import { checkStoreVersion, migrateStore, type StoreMigrationStep } from '../shared/store-version.ts';
import { UserError } from '../shared/user-error.ts';
import type { MlDsaName } from './pqc-transport-options.ts';
import { selfSignedCertificate } from './self-signed-certificate.ts';

/** The server's long-lived identity: the key TLS presents and (ML-DSA only) the key that signs evidence. */
export interface TransportIdentity {
  /** `ml-dsa-65`, …, or `ecdsa-p256` when no ML-DSA was asked for (TLS only, nothing signed). */
  algorithm: MlDsaName | 'ecdsa-p256';
  privateKey: KeyObject;
  publicKey: KeyObject;
  /** base64url SHA-256 of the public key's SubjectPublicKeyInfo: names the key in signatures. */
  keyId: string;
  /** The public key as PEM (SPKI), for clients that verify signatures. */
  publicKeyPem: string;
  /** Self-signed, for the loopback addresses and `localhost` (and the configured hosts). */
  certificatePem: string;
  keyPath: string;
  certificatePath: string;
}

export class TransportIdentityError extends UserError {
  override name = 'TransportIdentityError';
  constructor(message: string) {
    super(message, { exitCode: 2 });
  }
}

/** Self-signed and pinned by clients: a long life, so a client's trust does not lapse under it. */
const CERTIFICATE_YEARS = 10;

export function keyIdOf(publicKey: KeyObject): string {
  return createHash('sha256').update(publicKey.export({ format: 'der', type: 'spki' })).digest('base64url');
}

/**
 * Writes `text` to `path` only if no file is there (another process starting on the same data
 * dir may win; then its file is the one used), never leaving a partial file under `path`.
 */
function writeOnce(path: string, text: string, mode: number): void {
  // A fresh name, created exclusively: a file left (or planted) under a predictable name, with
  // another mode, is never written into (in a container the daemon is pid 1 on every start).
  const temp = `${path}.${randomBytes(8).toString('hex')}.tmp`;
  writeFileSync(temp, text, { mode, flag: 'wx' });
  try {
    linkSync(temp, path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    unlinkSync(temp);
  }
}

function readKey(path: string): KeyObject {
  const { mode, uid } = statSync(path);
  // As ssh refuses a private key others can read or own: that key is the server's identity.
  if (process.platform !== 'win32' && (mode & 0o077) !== 0) {
    throw new TransportIdentityError(`${path}: the transport identity's private key is readable by other users (mode ${(mode & 0o777).toString(8)}); run chmod 600 on it.`);
  }
  if (process.getuid !== undefined && uid !== process.getuid()) {
    throw new TransportIdentityError(`${path}: the transport identity's private key belongs to another user (uid ${uid}); the daemon runs as uid ${process.getuid()}.`);
  }
  try {
    return createPrivateKey(readFileSync(path));
  } catch (error) {
    throw new TransportIdentityError(`${path}: not a private key this build can read (${(error as Error).message}); move it away to have a new identity made.`);
  }
}

/** Whether the stored certificate is for this key, covers every name, and is in its validity period. */
function certificateFits(pem: string, publicKey: KeyObject, names: readonly string[]): boolean {
  try {
    const certificate = new X509Certificate(pem);
    const now = Date.now();
    if (Date.parse(certificate.validFrom) > now || Date.parse(certificate.validTo) <= now) return false;
    if (!certificate.publicKey.equals(publicKey)) return false;
    return names.every((n) => (isIP(n) !== 0 ? certificate.checkIP(n) !== undefined : certificate.checkHost(n) !== undefined));
  } catch {
    return false;
  }
}

/**
 * The identity's files have no room for a version of their own (PEM), so `transport/version`
 * beside them records it: a whole number and a newline. svc 0.1.0 wrote none (version 0 here);
 * its files are version 1 as they are, so step 0 only stamps. A new layout is one step appended.
 */
const VERSION_FILE = 'version';
const STEPS: readonly StoreMigrationStep[] = [() => {}];

/** What `transport/version` says: 0 when it is not there; its text when it is not a whole number (refused as unreadable). */
function storedVersion(path: string): number | string {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw error;
  }
  return /^\d{1,9}\n?$/.test(text) ? Number(text.trim()) : text.slice(0, 40);
}

/** The folder's version, checked: StoreVersionError (nothing touched yet) when a newer svc wrote it. */
function checkTransportVersion(dir: string): number {
  const path = join(dir, VERSION_FILE);
  return checkStoreVersion({ store: 'transport identity', file: path }, storedVersion(path), STEPS.length);
}

/** Brings the folder (made by now) from version `found` to the newest: the steps, then `transport/version`. */
function migrateTransportFolder(dir: string, found: number): void {
  const path = join(dir, VERSION_FILE);
  migrateStore({ store: 'transport identity', file: path }, found, STEPS, (version) => {
    const temp = `${path}.${randomBytes(8).toString('hex')}.tmp`;
    writeFileSync(temp, `${version}\n`, { mode: 0o600, flag: 'wx' });
    renameSync(temp, path);
  });
}

/**
 * Loads the identity kept in `<dataDir>/transport`, or makes it on first start: a private key
 * (mode 0600, never rewritten) and a self-signed certificate for `names` (remade from the same key
 * when the names change or it expires, so pinned public keys keep working).
 */
export function loadTransportIdentity(options: { dataDir: string; algorithm: MlDsaName | undefined; names: readonly string[] }): TransportIdentity {
  const algorithm = options.algorithm ?? 'ecdsa-p256';
  const dir = join(options.dataDir, 'transport');
  // A version this build does not know is refused before the folder's mode or files change.
  const version = checkTransportVersion(dir);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  // mkdir's mode applies only to a folder it creates.
  if (process.platform !== 'win32') chmodSync(dir, 0o700);
  if (version !== STEPS.length) migrateTransportFolder(dir, version);
  const keyPath = join(dir, `identity-${algorithm}.key`);
  const certificatePath = join(dir, `identity-${algorithm}.crt`);
  let privateKey: KeyObject;
  try {
    privateKey = readKey(keyPath);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    const pair = algorithm === 'ecdsa-p256' ? generateKeyPairSync('ec', { namedCurve: 'P-256' }) : generateKeyPairSync(algorithm);
    writeOnce(keyPath, pair.privateKey.export({ format: 'pem', type: 'pkcs8' }) as string, 0o600);
    privateKey = readKey(keyPath);
  }
  const expected = algorithm === 'ecdsa-p256' ? 'ec' : algorithm;
  const curve = privateKey.asymmetricKeyDetails?.namedCurve;
  if (privateKey.asymmetricKeyType !== expected || (expected === 'ec' && curve !== 'prime256v1')) {
    const held = privateKey.asymmetricKeyType === 'ec' ? `an EC ${curve ?? 'unknown-curve'}` : `a ${privateKey.asymmetricKeyType ?? 'unknown'}`;
    throw new TransportIdentityError(`${keyPath}: holds ${held} key, not ${algorithm}; move it away to have a new identity made.`);
  }
  const publicKey = createPublicKey(privateKey);
  let certificatePem: string | undefined;
  try {
    certificatePem = readFileSync(certificatePath, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  if (certificatePem === undefined || !certificateFits(certificatePem, publicKey, options.names)) {
    const notBefore = new Date(Date.now() - 3_600_000);
    const notAfter = new Date(notBefore.getTime() + CERTIFICATE_YEARS * 365.25 * 86_400_000);
    certificatePem = selfSignedCertificate({ privateKey, publicKey, commonName: 'svc daemon', names: options.names, notBefore, notAfter });
    const temp = `${certificatePath}.${process.pid}.tmp`;
    writeFileSync(temp, certificatePem, { mode: 0o600 });
    renameSync(temp, certificatePath);
  }
  return {
    algorithm,
    privateKey,
    publicKey,
    keyId: keyIdOf(publicKey),
    publicKeyPem: publicKey.export({ format: 'pem', type: 'spki' }) as string,
    certificatePem,
    keyPath,
    certificatePath,
  };
}
