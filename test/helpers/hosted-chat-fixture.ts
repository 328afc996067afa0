/**
 * A hosted app with chat, evidence and usage mounted over a real store and a scripted
 * OpenAI-protocol upstream: the pieces the hosted chat tests share.
 */
import type { TestContext } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildHostedApp } from '../../src/hosted/hosted-app.ts';
import { evidencePlugin } from '../../src/hosted/chat/evidence-route.ts';
import { hostedChatPlugin } from '../../src/hosted/chat/hosted-chat-route.ts';
import type { RateLimiter } from '../../src/accounts/limits/rate-limiter.ts';
import { usagePlugin } from '../../src/hosted/chat/usage-route.ts';
import type { HostedStore } from '../../src/accounts/hosted-store.ts';
import type { KeyScope } from '../../src/accounts/key-store.ts';
import type { Plan } from '../../src/accounts/plan.ts';
import { routeConfigSchema, type RouteConfig } from '../../src/hosted/route-config.ts';
import { RouteExecutor } from '../../src/hosted/routing/route-executor.ts';
import { SVC_VERSION } from '../../src/shared/version.ts';
import type { TransportSecurity } from '../../src/transport/transport-security.ts';
import { hostedStoreKinds, type HostedStoreFixture } from './hosted-stores.ts';
import { contentChunk, finishChunk, sse, startScriptedUpstream, type ScriptedUpstream } from './scripted-upstream.ts';

/** 0.01 J per prompt token, 0.5 J per completion token, no load term: figures a test can predict. */
export function chatRouteConfig(baseUrl: string): RouteConfig {
  return routeConfigSchema.parse({
    default_policy: 'supercomputer-fast',
    models: [{ id: 'svc-chat-small', family: 'chat' }],
    backends: [{
      id: 'mock', kind: 'upstream', upstream: { base_url: baseUrl }, sharing: 'dedicated', execution_plane: 'supercomputer',
      models: { 'svc-chat-small': 'm' }, energy: { joules_per_prompt_token: 0.01, joules_per_completion_token: 0.5, joules_per_second: 0 }, provider: 'mock-provider',
    }],
    routes: [
      { policy: 'supercomputer-fast', queue_class: 'interactive', backends: ['mock'] },
      { policy: 'supercomputer-deep', queue_class: 'deep', backends: ['mock'] },
      { policy: 'enterprise-private', queue_class: 'enterprise', backends: ['mock'], enterprise_only: true },
    ],
  });
}

/** An upstream answer of `words` text deltas and usage (10 prompt tokens, one completion token per word). */
export function wordsAnswer(words: readonly string[]) {
  return sse([...words.map((w) => contentChunk(w)), finishChunk('stop', { usage: { prompt_tokens: 10, completion_tokens: words.length, total_tokens: 10 + words.length } }), '[DONE]']);
}

export interface ChatFixture {
  app: FastifyInstance;
  store: HostedStore;
  fixture: HostedStoreFixture;
  upstream: ScriptedUpstream;
  /** A new account on `plan` (defaults: entitled, 1000 J, not enterprise) with one key. */
  account(plan?: Partial<Plan>, scope?: KeyScope): Promise<{ accountId: string; keyId: string; secret: string }>;
}

export async function buildChatFixture(t: TestContext, options: { kind?: 'sqlite' | 'postgres'; limiter?: RateLimiter; enterprise?: boolean; transport?: TransportSecurity } = {}): Promise<ChatFixture> {
  const fixture = await hostedStoreKinds.find((k) => k.kind === (options.kind ?? 'sqlite'))!.open();
  const upstream = await startScriptedUpstream(wordsAnswer(['Hello', ' world']));
  const executor = new RouteExecutor({ env: {} });
  const app = await buildHostedApp({
    store: fixture.store, routes: chatRouteConfig(upstream.baseUrl), build: { version: SVC_VERSION, commit: null }, enterprise: options.enterprise === true, limiter: options.limiter,
    transport: options.transport,
    v1Plugins: [hostedChatPlugin({ executor, limiter: options.limiter, signEvidence: options.transport === undefined ? undefined : (route) => options.transport!.signEvidence(route) }), evidencePlugin(), usagePlugin()],
  });
  t.after(async () => {
    await app.close();
    await executor.close();
    await upstream.close();
    await fixture.cleanup();
  });
  return {
    app, store: fixture.store, fixture, upstream,
    async account(plan = {}, scope = 'supercomputer') {
      const account = await fixture.store.createAccount({ name: 'acme', plan: { monthlyJouleAllowance: 1000, hostedEntitlement: true, enterprise: false, ...plan } });
      const issued = await fixture.store.issueKey(account.id, { scope });
      return { accountId: account.id, keyId: issued.key.id, secret: issued.secret };
    },
  };
}
