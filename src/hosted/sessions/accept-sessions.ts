import cookie from '@fastify/cookie';
import type { FastifyInstance, FastifyReply, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import type { HostedContext } from '../hosted-plugin.ts';
import type { SessionStore } from '../../accounts/session-store.ts';
import { HostedError } from '../hosted-error.ts';
import { RateLimitedError } from '../../accounts/limits/rate-limited-error.ts';
import { bearerToken } from '../../accounts/bearer-token.ts';
import { SESSION_TOKEN_PREFIX } from '../../accounts/store/store-secrets.ts';
import { SESSION_COOKIE, sessionRequired } from './require-session.ts';
import { bindRequestLog } from '../bind-request-log.ts';

/**
 * Makes `scope`'s read-only routes answer a signed-in person as well as an API key (the usage
 * report, which the console's usage page reads in the browser with the session cookie).
 * - `Authorization: Bearer <API_KEY>`: exactly `requireKey` (key rules, limiter, errors).
 * - `Authorization: Bearer svc_ses_…`, or no Authorization and the `svc_session` cookie: a live
 *   session of the account, which is then `request.hostedSession`; its limiter bucket is the
 *   session's own. Not in fleet mode (`/v1`): enterprise keys only, as before.
 * - Neither, or a cookie whose session is unknown, expired or signed out: 401
 *   `svc_api_key_required`, as for any key route (the contract's code for a missing or invalid
 *   key on /v1/usage); only an explicit `Bearer svc_ses_…` that is not live gets `session_required`.
 * Only GET routes use it, so there is nothing for a forged cross-site request to change; the
 * cookie is SameSite=Strict and CORS never allows credentials, so another site can neither send
 * it nor read the answer.
 */
export async function acceptSessions(scope: FastifyInstance, context: HostedContext<SessionStore>): Promise<preHandlerAsyncHookHandler> {
  if (context.fleet) return context.requireKey;
  await scope.register(cookie);
  scope.decorateRequest('hostedSession', undefined);
  return async function checkKeyOrSession(this: FastifyInstance, request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const header = request.headers.authorization;
    const bearer = bearerToken(header);
    // A key in x-api-key (Anthropic's clients) is a key like a bearer one.
    const keyHeader = header === undefined && request.headers['x-api-key'] !== undefined;
    if (keyHeader || (header !== undefined && bearer?.startsWith(SESSION_TOKEN_PREFIX) !== true)) {
      await context.requireKey.call(this, request, reply);
      return;
    }
    const cookieToken = request.cookies[SESSION_COOKIE];
    const token = bearer ?? (typeof cookieToken === 'string' && cookieToken !== '' ? cookieToken : undefined);
    if (token === undefined) {
      throw new HostedError({
        status: 401, type: 'authentication_error', code: 'svc_api_key_required',
        message: 'An API key is required: send Authorization: Bearer <API_KEY>, or sign in (a sign-in link from svc admin sign-in-link) to read your account in the browser.',
        headers: { 'www-authenticate': 'Bearer realm="svc"' },
      });
    }
    let found;
    try {
      found = await context.store.checkSession(token);
    } catch (error) {
      request.log.error({ err: error }, 'checking a session failed: the hosted store did not answer');
      throw new HostedError({ status: 503, type: 'server_error', code: 'ledger_unavailable', message: 'The account and ledger store is unavailable right now. Retry shortly.', retryAfterSeconds: 1 });
    }
    if (found === undefined) {
      // An explicit `Bearer svc_ses_…` asked to be read as a session, and is told so. A cookie
      // with no Authorization is a request with no key as far as the contract goes: missing or
      // invalid credentials on /v1/usage are `svc_api_key_required`.
      if (bearer !== undefined) throw sessionRequired('The session is not valid or has expired; sign in again.');
      throw new HostedError({
        status: 401, type: 'authentication_error', code: 'svc_api_key_required',
        message: 'An API key is required: the session cookie is not valid or has expired. Sign in again (a sign-in link from svc admin sign-in-link), or send Authorization: Bearer <API_KEY>.',
        headers: { 'www-authenticate': 'Bearer realm="svc"' },
      });
    }
    request.hostedSession = { session: found.session, account: found.account, via: bearer === undefined ? 'cookie' : 'bearer' };
    bindRequestLog(request, { account_id: found.account.id });
    if (context.limiter !== undefined) {
      const decision = await context.limiter.take({ keyId: `session:${found.session.id}`, accountId: found.account.id, queueClass: 'interactive' });
      if (!decision.allowed) throw new RateLimitedError(decision);
    }
  };
}
