import type { FastifyReply, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import type { Account } from '../accounts/account-store.ts';
import type { Allowance } from '../accounts/allowance.ts';
import type { ApiKeyRecord, KeyStore } from '../accounts/key-store.ts';
import { HostedError } from './hosted-error.ts';
import { RateLimitedError } from '../accounts/limits/rate-limited-error.ts';
import type { RateLimiter } from '../accounts/limits/rate-limiter.ts';
import { bindRequestLog } from './bind-request-log.ts';
import { bearerToken } from '../accounts/bearer-token.ts';

/** Who a hosted request is made as, once `requireKey` has let it through. */
export interface HostedIdentity {
  account: Account;
  key: ApiKeyRecord;
  /** The account's Joule allowance this month, as read with the key. */
  allowance: Allowance;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by `requireKey` on the routes that use it; undefined everywhere else. */
    hostedIdentity: HostedIdentity | undefined;
  }
}

function keyRequired(message: string): HostedError {
  return new HostedError({ status: 401, type: 'authentication_error', code: 'svc_api_key_required', message, headers: { 'www-authenticate': 'Bearer realm="svc"' } });
}

/** Longest x-api-key value read, as for Authorization (bearer-token.ts). */
const MAX_API_KEY_CHARS = 512;

/**
 * The key a request presents: `Authorization: Bearer <key>`, or `x-api-key: <key>` (what
 * Anthropic's clients send). Both at once must name the same key; anything else is 401.
 */
function presentedKey(request: FastifyRequest): string {
  const header = request.headers.authorization;
  const apiKeyHeader = request.headers['x-api-key'];
  const apiKey = typeof apiKeyHeader === 'string' && apiKeyHeader.length <= MAX_API_KEY_CHARS ? apiKeyHeader.trim() : undefined;
  if (apiKeyHeader !== undefined && (apiKey === undefined || !/^\S+$/.test(apiKey))) throw keyRequired('The x-api-key header must be one API key.');
  if (header === undefined) {
    if (apiKey === undefined) throw keyRequired('An API key is required: send Authorization: Bearer <API_KEY> (or x-api-key: <API_KEY>).');
    return apiKey;
  }
  const secret = bearerToken(header);
  if (secret === undefined) throw keyRequired('The Authorization header must be Bearer <API_KEY>.');
  if (apiKey !== undefined && apiKey !== secret) throw keyRequired('Authorization and x-api-key name different keys; send one key.');
  return secret;
}

export interface RequireKeyOptions {
  /** Fleet mode (`/v1`): only keys of enterprise accounts (403 `enterprise_plan_required` otherwise). */
  enterprise?: boolean;
  /** Take one request from the key's bucket (and the interactive class's) once the key is known. */
  limiter?: RateLimiter | undefined;
}

/**
 * A preHandler for the routes that need a key, used per route or in one encapsulated plugin so
 * it never runs on routes that do not (the local daemon's, the public descriptors).
 * The key comes in `Authorization: Bearer` or `x-api-key` (presentedKey).
 * Missing or unknown key → 401 `svc_api_key_required`; revoked → 401 `svc_api_key_revoked`;
 * a key of a disabled account → 401 `svc_account_disabled`. Once the key is known, the
 * request's log lines (its request line too) carry `account_id` and `key_id`, never the secret.
 */
export function requireKey(store: Pick<KeyStore, 'checkKey'>, options: RequireKeyOptions = {}): preHandlerAsyncHookHandler {
  return async function checkKey(request: FastifyRequest, _reply: FastifyReply): Promise<void> {
    const secret = presentedKey(request);
    let check;
    try {
      check = await store.checkKey(secret);
    } catch (error) {
      // The store is down: that is the service's trouble, not the key's, and it passes.
      request.log.error({ err: error }, 'checking an API key failed: the hosted store did not answer');
      throw new HostedError({ status: 503, type: 'server_error', code: 'ledger_unavailable', message: 'The account and ledger store is unavailable right now; nothing was run. Retry shortly.', retryAfterSeconds: 1 });
    }
    // Attribution for every known key, refused ones too (abuse with a revoked key is worth seeing).
    if (check.status !== 'unknown') bindRequestLog(request, { account_id: check.key.accountId, key_id: check.key.id });
    if (check.status === 'revoked') {
      throw new HostedError({ status: 401, type: 'authentication_error', code: 'svc_api_key_revoked', message: 'This API key was revoked; issue a new one at /settings/api-keys.' });
    }
    if (check.status === 'account_disabled') {
      throw new HostedError({ status: 401, type: 'authentication_error', code: 'svc_account_disabled', message: 'The account of this API key is disabled; its keys are refused until the operator enables it again.' });
    }
    if (check.status !== 'valid') throw keyRequired('The API key is not valid.');
    if (options.enterprise === true && !check.account.plan.enterprise) {
      throw new HostedError({ status: 403, type: 'permission_error', code: 'enterprise_plan_required', message: 'The enterprise fleet API (/v1) needs a key of an account on an enterprise plan.' });
    }
    request.hostedIdentity = { account: check.account, key: check.key, allowance: check.allowance };
    if (options.limiter !== undefined) {
      const decision = await options.limiter.take({ keyId: check.key.id, accountId: check.account.id, queueClass: 'interactive' });
      if (!decision.allowed) throw new RateLimitedError(decision);
    }
  };
}

/**
 * Hosted compute (chat) and its usage report need a `supercomputer` key of an account with an
 * active entitlement: a `developer_runtime` key is identity only (402 `insufficient_quota`).
 */
export function requireHostedEntitlement(identity: HostedIdentity): void {
  const refuse = (message: string) => new HostedError({ status: 402, type: 'insufficient_quota', code: 'insufficient_quota', message });
  if (identity.key.scope !== 'supercomputer') throw refuse('This is a developer_runtime key: it has no hosted compute entitlement. Use a supercomputer key.');
  if (!identity.account.plan.hostedEntitlement) throw refuse('This account has no active hosted compute entitlement.');
}
