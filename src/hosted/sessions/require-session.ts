import type { FastifyReply, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import type { Account } from '../../accounts/account-store.ts';
import type { Session, SessionStore } from '../../accounts/session-store.ts';
import { HostedError } from '../hosted-error.ts';
import { bearerToken } from '../../accounts/bearer-token.ts';
import { bindRequestLog } from '../bind-request-log.ts';
import { RateLimitedError } from '../../accounts/limits/rate-limited-error.ts';
import type { RateLimiter } from '../../accounts/limits/rate-limiter.ts';

/** The session cookie: HttpOnly, SameSite=Strict, Path=/ (see session-routes.ts). */
export const SESSION_COOKIE = 'svc_session';

/** Who a key-management request is made as, once `requireSession` has let it through. */
export interface SessionIdentity {
  session: Session;
  account: Account;
  /** How the session was presented: only a cookie is sent by a browser on its own, so only it needs CSRF checks. */
  via: 'cookie' | 'bearer';
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by `requireSession` on the key-management routes; undefined everywhere else. */
    hostedSession: SessionIdentity | undefined;
  }
}

const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

export function sessionRequired(message: string): HostedError {
  return new HostedError({ status: 401, type: 'authentication_error', code: 'session_required', message, headers: { 'www-authenticate': 'Bearer realm="svc-session"' } });
}

/**
 * The session token a request presents: `Authorization: Bearer svc_ses_…` first, else the cookie.
 * An API key in Authorization is not a session, and says so rather than "not signed in".
 */
export function presentedSession(request: FastifyRequest): { token: string; via: 'cookie' | 'bearer' } | undefined {
  const header = request.headers.authorization;
  if (header !== undefined) {
    const token = bearerToken(header);
    if (token === undefined) throw sessionRequired('The Authorization header must be Bearer <SESSION_TOKEN>.');
    if (/^svc_(?:dk|sk)_/.test(token)) throw sessionRequired('API keys cannot manage keys: sign in with a sign-in link and use the session (cookie or svc_ses_ token).');
    return { token, via: 'bearer' };
  }
  const cookie = request.cookies[SESSION_COOKIE];
  return typeof cookie === 'string' && cookie !== '' ? { token: cookie, via: 'cookie' } : undefined;
}

/** The media type of Content-Type, lower-cased, without parameters. */
function mediaType(request: FastifyRequest): string | undefined {
  const header = request.headers['content-type'];
  return typeof header === 'string' ? (header.split(';', 1)[0] ?? '').trim().toLowerCase() : undefined;
}

/** The Host header as the URL parser writes it for `scheme` (lower case, default port dropped). */
function ownHost(scheme: string, host: string): string | undefined {
  try {
    return new URL(`${scheme}//${host}`).host;
  } catch {
    return undefined;
  }
}

/** No body at all: no Transfer-Encoding, and no Content-Length or a zero one. */
export function hasNoBody(request: FastifyRequest): boolean {
  const length = request.headers['content-length'];
  return request.headers['transfer-encoding'] === undefined && (length === undefined || length === '0');
}

/**
 * CSRF defence for requests a browser may send on its own with the cookie. SameSite=Strict keeps
 * the cookie off cross-site requests already; on top, a mutating request must be JSON (a plain
 * HTML form cannot send application/json, and a cross-origin fetch of it needs a CORS preflight)
 * and, when the browser names its Origin, that origin must be this host. The scheme is not
 * compared when the request arrived over plain HTTP, because TLS may end at a proxy in front.
 * A DELETE without a body (`DELETE /api/keys?id=…`) need not name a type: no form can send a
 * DELETE, and a cross-origin fetch of one always needs a preflight, which /api never grants with
 * credentials; the Origin check still applies.
 */
export function assertSameOriginJson(request: FastifyRequest, publicOrigins: readonly string[] = []): void {
  if (!MUTATING.has(request.method)) return;
  if (mediaType(request) !== 'application/json' && !(request.method === 'DELETE' && hasNoBody(request))) {
    throw new HostedError({ status: 415, type: 'invalid_request_error', code: 'unsupported_media_type', message: 'Send this request with Content-Type: application/json (a JSON body, {} if there is nothing else to say).' });
  }
  const origin = request.headers.origin;
  if (origin === undefined) return;
  let url: URL | undefined;
  try {
    url = new URL(origin);
  } catch {
    url = undefined;
  }
  const schemes = request.protocol === 'https' ? ['https:'] : ['http:', 'https:'];
  // Behind a proxy that rewrites Host, the configured public origins are the site; else its Host.
  const sameSite = url !== undefined && url.origin === origin.toLowerCase() && (publicOrigins.length > 0
    ? publicOrigins.includes(url.origin)
    : schemes.includes(url.protocol) && url.host === ownHost(url.protocol, request.host));
  if (!sameSite) {
    throw new HostedError({ status: 403, type: 'permission_error', code: 'cross_origin_request_refused', message: 'Signed-in requests must come from this site itself (the Origin header names another).' });
  }
}

/**
 * A preHandler for the key-management routes (used only in their plugin): a live session, by
 * bearer session token or cookie, the CSRF check for cookie-borne mutating requests, and a take
 * from the backstop limiter (the session's bucket and its account's), as every signed-in route does.
 */
export function requireSession(store: Pick<SessionStore, 'checkSession'>, publicOrigins: readonly string[] = [], limiter?: RateLimiter): preHandlerAsyncHookHandler {
  return async function checkSession(request: FastifyRequest, _reply: FastifyReply): Promise<void> {
    const presented = presentedSession(request);
    if (presented === undefined) throw sessionRequired('Sign in first: open a sign-in link from your operator (svc admin sign-in-link).');
    const found = await store.checkSession(presented.token);
    if (found === undefined) throw sessionRequired('The session is not valid or has expired; sign in again.');
    bindRequestLog(request, { account_id: found.account.id });
    if (presented.via === 'cookie') assertSameOriginJson(request, publicOrigins);
    request.hostedSession = { session: found.session, account: found.account, via: presented.via };
    if (limiter !== undefined) {
      const decision = await limiter.take({ keyId: `session:${found.session.id}`, accountId: found.account.id, queueClass: 'interactive' });
      if (!decision.allowed) throw new RateLimitedError(decision);
    }
  };
}
