import { hash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { KeyScope } from '../key-store.ts';

/** Secret prefixes by scope: recognizable (and matchable by secret scanners) before the random part. */
export const KEY_PREFIXES: ReadonlyMap<KeyScope, string> = new Map([
  ['developer_runtime', 'svc_dk_'],
  ['supercomputer', 'svc_sk_'],
]);

// 32 random bytes in base64url without padding are always 43 characters.
const KEY_SECRET_SHAPE = /^svc_(?:dk|sk)_[A-Za-z0-9_-]{43}$/;
const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/;
/** Session tokens carry their own prefix, so one is never mistaken for an API key (or pasted as one). */
export const SESSION_TOKEN_PREFIX = 'svc_ses_';
const SESSION_TOKEN_SHAPE = /^svc_ses_[A-Za-z0-9_-]{43}$/;

/** 256 random bits, base64url: the whole entropy of every key, sign-in and session secret. */
export function randomToken(): string {
  return randomBytes(32).toString('base64url');
}

export function newKeySecret(scope: KeyScope): string {
  const prefix = KEY_PREFIXES.get(scope);
  if (prefix === undefined) throw new TypeError(`unknown key scope: ${String(scope)}`);
  return prefix + randomToken();
}

/**
 * SHA-256, hex. A fast unsalted hash is right here: every secret carries 256 random bits, so
 * there is nothing to brute-force, and lookups stay one indexed equality.
 */
export function hashSecret(secret: string): string {
  return hash('sha256', secret, 'hex');
}

/** Constant-time equality of two hex digests (the stored one and the presented secret's). */
export function sameHash(a: string, b: string): boolean {
  const left = Buffer.from(a, 'hex');
  const right = Buffer.from(b, 'hex');
  return left.length === right.length && left.length > 0 && timingSafeEqual(left, right);
}

/** Whether a string could be a key secret at all: anything else is unknown without a query. */
export function looksLikeKeySecret(secret: string): boolean {
  return KEY_SECRET_SHAPE.test(secret);
}

export function looksLikeToken(token: string): boolean {
  return TOKEN_SHAPE.test(token);
}

export function newSessionToken(): string {
  return SESSION_TOKEN_PREFIX + randomToken();
}

export function looksLikeSessionToken(token: string): boolean {
  return SESSION_TOKEN_SHAPE.test(token);
}
