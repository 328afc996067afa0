import cookie from '@fastify/cookie';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { HostedContext, HostedPlugin } from '../hosted-plugin.ts';
import type { SessionStore } from '../../accounts/session-store.ts';
import { HostedError } from '../hosted-error.ts';
import { PAGE_HEADERS, readPage } from '../pages/page-assets.ts';
import { assertSameOriginJson, presentedSession, SESSION_COOKIE } from './require-session.ts';
import { installSmallJsonParser } from './small-json-parser.ts';

export const DEFAULT_SESSION_TTL_MS = 7 * 24 * 60 * 60 * 1000;

export interface SessionRoutesOptions {
  /** How long a session lasts from sign-in (default 7 days). */
  sessionTtlMs?: number | undefined;
  /** Mark the cookie Secure even on plain-HTTP requests (TLS ends at a proxy in front). */
  secureCookies?: boolean | undefined;
}

const redeemBody = z.strictObject({ token: z.string().min(1).max(256) });

function invalidBody(message: string): HostedError {
  return new HostedError({ status: 400, type: 'invalid_request_error', code: 'invalid_request', message });
}

function cookieOptions(request: FastifyRequest, options: SessionRoutesOptions) {
  return { httpOnly: true, sameSite: 'strict' as const, path: '/', secure: options.secureCookies === true || request.protocol === 'https' };
}

/**
 * Sign-in and sign-out under `/api/session`. A sign-in link's GET only shows a page with a
 * button (mail scanners prefetch links; a GET that spent the token would sign nobody in); the
 * button POSTs the token, which is spent then.
 */
export function sessionRoutes(options: SessionRoutesOptions = {}): HostedPlugin<SessionStore> {
  const ttlMs = options.sessionTtlMs ?? DEFAULT_SESSION_TTL_MS;
  const signInPage = readPage('sign-in.html');
  return async (scope, { store, publicOrigins }: HostedContext<SessionStore>) => {
    await scope.register(cookie);
    installSmallJsonParser(scope);

    scope.get('/session/sign-in', async (_request, reply: FastifyReply) => reply.headers(PAGE_HEADERS).type('text/html; charset=utf-8').send(signInPage));

    scope.post('/session', async (request, reply) => {
      assertSameOriginJson(request, publicOrigins);
      const parsed = redeemBody.safeParse(request.body);
      if (!parsed.success) throw invalidBody('The body must be {"token": "<the token of your sign-in link>"} and nothing else.');
      const redeemed = await store.redeemSignInToken(parsed.data.token, ttlMs);
      if (redeemed === undefined) {
        throw new HostedError({ status: 401, type: 'authentication_error', code: 'sign_in_link_invalid', message: 'This sign-in link is unknown, already used or expired; ask your operator for a new one.' });
      }
      const { session, token } = redeemed;
      reply.setCookie(SESSION_COOKIE, token, { ...cookieOptions(request, options), expires: session.expiresAt });
      return reply.code(200).header('cache-control', 'no-store').send({ session_token: token, expires_at: session.expiresAt.toISOString() });
    });

    scope.delete('/session', async (request, reply) => {
      const presented = presentedSession(request);
      if (presented?.via === 'cookie') assertSameOriginJson(request, publicOrigins);
      // Signing out is idempotent: an unknown or expired session is already signed out.
      if (presented !== undefined) await store.endSession(presented.token);
      reply.clearCookie(SESSION_COOKIE, cookieOptions(request, options));
      return reply.header('cache-control', 'no-store').send({ signed_out: true });
    });
  };
}
