/**
 * A hosted app on the real SQLite store, plus signing in as an account the way a browser would
 * (a sign-in token from the store, redeemed with POST /api/session).
 */
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildHostedApp, type HostedAppOptions } from '../../src/hosted/hosted-app.ts';
import type { Account } from '../../src/accounts/account-store.ts';
import type { HostedStore } from '../../src/accounts/hosted-store.ts';
import type { Plan } from '../../src/accounts/plan.ts';
import { SVC_VERSION } from '../../src/shared/version.ts';
import { testRouteConfig } from './hosted-route-config.ts';
import { hostedStoreKinds, type HostedStoreFixture } from './hosted-stores.ts';

export const FREE_PLAN: Plan = { monthlyJouleAllowance: 0, hostedEntitlement: false, enterprise: false };
export const PAID_PLAN: Plan = { monthlyJouleAllowance: 1_000_000, hostedEntitlement: true, enterprise: false };

export async function openSqliteStore(t: TestContext): Promise<HostedStoreFixture> {
  const fixture = await hostedStoreKinds.find((k) => k.kind === 'sqlite')!.open();
  t.after(() => fixture.cleanup());
  return fixture;
}

export async function buildTestHostedApp(t: TestContext, options: Partial<HostedAppOptions> = {}): Promise<{ app: FastifyInstance; store: HostedStore; fixture: HostedStoreFixture }> {
  const fixture = await openSqliteStore(t);
  const app = await buildHostedApp({ store: fixture.store, routes: testRouteConfig(), build: { version: SVC_VERSION, commit: null }, ...options });
  // Registered after the store's cleanup, so it runs first (t.after runs in reverse order).
  t.after(() => app.close());
  return { app, store: fixture.store, fixture };
}

export interface SignedIn {
  account: Account;
  sessionToken: string;
  /** The `svc_session=…` cookie pair as a browser would send it back. */
  cookie: string;
}

export async function signIn(app: FastifyInstance, store: HostedStore, plan: Plan = FREE_PLAN, name = 'acct'): Promise<SignedIn> {
  const account = await store.createAccount({ name, plan });
  const { token } = await store.createSignInToken(account.id, 60_000);
  const res = await app.inject({ method: 'POST', url: '/api/session', payload: { token } });
  assert.equal(res.statusCode, 200, res.body);
  const sessionToken = res.json<{ session_token: string }>().session_token;
  const cookie = res.cookies.find((c) => c.name === 'svc_session');
  assert.ok(cookie !== undefined);
  return { account, sessionToken, cookie: `svc_session=${cookie.value}` };
}
