import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { DeveloperKeyVerifier } from '../accounts/developer-keys/developer-key-verifier.ts';
import { MemoryRateLimiter } from '../accounts/limits/memory-rate-limiter.ts';
import type { BucketLimit } from '../accounts/limits/limits-config.ts';
import { bearerToken } from '../accounts/bearer-token.ts';
import { PROJECT_ID } from '../accounts/project-id.ts';
import { ApiError } from '../shared/api-error.ts';

/** Who a local request was made as, when it carried a developer key that verified. Never the secret. */
export interface DeveloperKeyCaller {
  keyId: string;
  accountId: string;
  /** `x-svc-project-id` when the request sent a well-formed one, else the key's own project. */
  project: string | null;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the developer-key guard for a request with a valid key; undefined otherwise. */
    developerKey: DeveloperKeyCaller | undefined;
  }
  interface FastifyContextConfig {
    /**
     * A route any caller may reach without a key: the console's built files (its page, script
     * and styles hold no data; every API call the page then makes is checked as usual).
     */
    keyFree?: boolean;
  }
}

/**
 * Local per-key defaults: a developer's own tools on one machine should never meet them
 * (inference itself is far slower), yet a runaway loop with one key is cut off.
 */
export const DEFAULT_DEVELOPER_KEY_LIMIT: BucketLimit = { requests_per_second: 100, burst: 500 };

export interface DeveloperKeyGuardOptions {
  verifier: DeveloperKeyVerifier;
  /** Enforcement: requests without a developer key get 401 `developer_key_required`. */
  required: boolean;
  limit?: BucketLimit | undefined;
}

/** The contract's fixed key string for local use without a key. */
const NO_KEY = 'none';
/** Where developer keys start (`svc_dk_…`, `svc_sk_…`); other bearer values are other tools' keys. */
const KEY_START = 'svc_';
/** Paths any caller may reach: liveness probes must not need a key. */
const OPEN_PATHS = new Set(['/health']);

function unauthorized(code: string, message: string): ApiError {
  return new ApiError({ status: 401, type: 'authentication_error', code, message, headers: { 'www-authenticate': 'Bearer realm="svc"' } });
}

/** Longest `x-api-key` value read, as for Authorization (bearer-token.ts). */
const MAX_API_KEY_CHARS = 512;

/**
 * The key a request presents: `Authorization: Bearer <key>`, or `x-api-key: <key>` as
 * Anthropic's clients send it. Of the two, an svc key wins (a client may send another tool's
 * key in one header); else the bearer value, then the x-api-key value.
 */
function presentedKey(request: FastifyRequest): string | undefined {
  const bearer = bearerToken(request.headers.authorization);
  const header = request.headers['x-api-key'];
  const apiKey = typeof header === 'string' && header.length <= MAX_API_KEY_CHARS && header !== '' ? header.trim() : undefined;
  if (bearer?.startsWith(KEY_START) === true) return bearer;
  if (apiKey?.startsWith(KEY_START) === true) return apiKey;
  return bearer ?? apiKey;
}

function projectOf(request: FastifyRequest, keyProject: string | null): string | null {
  const header = request.headers['x-svc-project-id'];
  return typeof header === 'string' && PROJECT_ID.test(header) ? header : keyProject;
}

/**
 * Developer keys on the local daemon (the contract's pilot surface). Runs on onRequest, before
 * any body is read, so a refused request costs no parsing. Without enforcement, no key, `none`
 * and any bearer value not starting with `svc_` (another tool's key, sent by a client that was
 * pointed here) pass as anonymous; a `svc_` value is always checked, so a wrong or revoked key
 * is said to be wrong instead of silently ignored.
 */
export function installDeveloperKeyGuard(app: FastifyInstance, options: DeveloperKeyGuardOptions): { close(): Promise<void> } {
  // The hosted limiter's GCRA per key; its queue-class bucket is made too large to ever decide.
  const limiter = new MemoryRateLimiter({
    limits: {
      key: options.limit ?? DEFAULT_DEVELOPER_KEY_LIMIT,
      queue_classes: { interactive: { requests_per_second: 1_000_000, burst: 1_000_000 } },
    },
  });
  app.addHook('onRequest', async (request) => {
    try {
      await checkKey(request);
    } catch (error) {
      // Not a job for the job log (request-log.ts): the request never reached its route.
      request.refusedByGuard = true;
      throw error;
    }
  });
  const checkKey = async (request: FastifyRequest): Promise<void> => {
    if (request.method === 'OPTIONS' || OPEN_PATHS.has(request.url.split('?')[0] ?? '') || request.routeOptions.config.keyFree === true) return;
    const token = presentedKey(request);
    if (token === undefined || token === NO_KEY || !token.startsWith(KEY_START)) {
      if (!options.required) return;
      throw unauthorized('developer_key_required', 'This daemon requires a developer key: send Authorization: Bearer <DEVELOPER_KEY> (svc_dk_…), or x-api-key: <DEVELOPER_KEY>.');
    }
    const result = await options.verifier.verify(token);
    if (result.status === 'revoked') throw unauthorized('developer_key_revoked', 'This developer key was revoked; issue a new one at /settings/api-keys.');
    if (result.status !== 'valid') throw unauthorized('developer_key_invalid', 'The developer key is not valid.');
    request.developerKey = { keyId: result.keyId, accountId: result.accountId, project: projectOf(request, result.project) };
    const decision = limiter.takeSync({ keyId: result.keyId, queueClass: 'interactive' });
    if (!decision.allowed) {
      throw new ApiError({
        status: 429,
        type: 'rate_limit_error',
        code: 'rate_limit_exceeded',
        message: `Too many requests with this developer key; retry in ${decision.retryAfterSeconds} s.`,
        retryAfterSeconds: decision.retryAfterSeconds,
      });
    }
  };
  return { close: () => limiter.close() };
}
