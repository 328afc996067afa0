/**
 * Two `svc hosted` processes on the machine's PostgreSQL (a fresh schema per test), serving
 * chat from a fast local OpenAI-shaped mock upstream. SVC_SCALE_OUT_N / SVC_SCALE_OUT_INFLIGHT
 * set the load (default 2,000 at 64 in flight; the issue's figure is 20,000 at 256).
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import type { HostedStore } from '../../src/accounts/hosted-store.ts';
import { openHostedStore } from '../../src/accounts/store/open-hosted-store.ts';
import { startServerProcess } from '../helpers/daemon-process.ts';
import { freshPostgresSchema } from '../helpers/hosted-stores.ts';
import { postgresUnavailable, redisUnavailable, TEST_DATABASE_URL, TEST_REDIS_URL as REDIS_URL } from '../helpers/test-services.ts';

const N = Number(process.env.SVC_SCALE_OUT_N ?? 2000);
const IN_FLIGHT = Number(process.env.SVC_SCALE_OUT_INFLIGHT ?? 64);
const MODEL = 'svc-chat-small';
// Every test here runs two replicas on the machine's PostgreSQL and Redis.
const NO_POSTGRES = await postgresUnavailable('the 6 scale-out tests');
const NO_SERVICES = NO_POSTGRES !== false ? NO_POSTGRES : await redisUnavailable('the 6 scale-out tests');

/** An OpenAI-shaped upstream that answers every chat stream at once with two words and usage. */
async function startMock(t: TestContext): Promise<string> {
  const chunk = (delta: object, finish: string | null, extra: object = {}) =>
    `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }], ...extra })}\n\n`;
  const body = chunk({ role: 'assistant', content: 'Hello' }, null) + chunk({ content: ' world' }, null)
    + chunk({}, 'stop', { usage: { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 } }) + 'data: [DONE]\n\n';
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  }));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
}

interface Replica { url: string; kill(signal?: NodeJS.Signals): Promise<void> }

async function startReplica(t: TestContext, databaseUrl: string, routesFile: string): Promise<Replica> {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-scale-out-'));
  const replica = await startServerProcess(
    ['hosted', '--port', '0', '--host', '127.0.0.1', '--data-dir', dataDir, '--database-url', databaseUrl, '--routes', routesFile, '--redis-url', REDIS_URL, '--log-level', 'info'],
    { onExit: () => rmSync(dataDir, { recursive: true, force: true }) },
  );
  t.after(() => replica.stop());
  return { url: replica.url, kill: async (signal) => { await replica.stop(signal); } };
}

interface Cluster { store: HostedStore; replicas: [Replica, Replica] }

async function startCluster(t: TestContext, limits?: object): Promise<Cluster> {
  const { schema, drop } = freshPostgresSchema();
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-scale-out-'));
  // The test's own store migrates the fresh schema; the replicas reach it through search_path.
  const store = await openHostedStore({ dataDir, databaseUrl: TEST_DATABASE_URL, schema });
  t.after(async () => {
    await store.close();
    await drop();
    rmSync(dataDir, { recursive: true, force: true });
  });
  const upstream = await startMock(t);
  const routesFile = join(dataDir, 'routes.json');
  writeFileSync(routesFile, JSON.stringify({
    default_policy: 'supercomputer-fast',
    models: [{ id: MODEL, family: 'chat' }],
    backends: [{
      id: 'mock', kind: 'upstream', upstream: { base_url: upstream, kind: 'local' }, sharing: 'dedicated', execution_plane: 'supercomputer',
      models: { [MODEL]: 'm' }, energy: { joules_per_prompt_token: 0.01, joules_per_completion_token: 0.5, joules_per_second: 0 }, provider: 'mock',
    }],
    routes: [{ policy: 'supercomputer-fast', queue_class: 'interactive', backends: ['mock'] }],
    // Load here is spread over an account's many keys to measure the store, not the limits: the
    // account bucket (shared by those keys) is opened wide unless a test sets it.
    limits: { account: { requests_per_second: 1_000_000, burst: 1_000_000 }, ...limits },
  }));
  const url = `${TEST_DATABASE_URL}?options=${encodeURIComponent(`-c search_path=${schema}`)}`;
  const replicas = await Promise.all([startReplica(t, url, routesFile), startReplica(t, url, routesFile)]);
  return { store, replicas: [replicas[0], replicas[1]] };
}

interface Outcome { status: number; evidenceId?: string; billable?: number }

/** `count` chat requests alternating between the replicas, `inFlight` at a time. */
async function load(replicas: readonly Replica[], secrets: readonly string[], count: number, inFlight: number, onDone?: (done: number) => void, headersOf: (i: number) => Record<string, string> = () => ({})): Promise<Outcome[]> {
  const outcomes: Outcome[] = new Array<Outcome>(count);
  let next = 0;
  let done = 0;
  const body = JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'Say hello' }] });
  const worker = async (w: number) => {
    const secret = secrets[w % secrets.length]!;
    while (next < count) {
      const i = next++;
      const replica = replicas[i % replicas.length]!;
      try {
        const res = await fetch(`${replica.url}/api/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${secret}`, ...headersOf(i) }, body });
        const json = await res.json() as { svc_route?: { evidence_id: string; billable_joules: number } };
        outcomes[i] = { status: res.status, ...(json.svc_route ? { evidenceId: json.svc_route.evidence_id, billable: json.svc_route.billable_joules } : {}) };
      } catch {
        outcomes[i] = { status: 0 };
      }
      onDone?.(++done);
    }
  };
  await Promise.all(Array.from({ length: inFlight }, (_, w) => worker(w)));
  return outcomes;
}

/** One account with `keys` keys: the load is spread over keys so the per-key limit (50/s by default) is not what is measured. */
async function newAccount(store: HostedStore, allowance: number, keys = 64): Promise<{ id: string; secret: string; secrets: string[] }> {
  const account = await store.createAccount({ name: 'load', plan: { monthlyJouleAllowance: allowance, hostedEntitlement: true, enterprise: false } });
  const secrets: string[] = [];
  for (let i = 0; i < keys; i++) secrets.push((await store.issueKey(account.id, { scope: 'supercomputer' })).secret);
  return { id: account.id, secret: secrets[0]!, secrets };
}

async function ledgerIds(store: HostedStore, accountId: string, ids: readonly string[]): Promise<number> {
  let found = 0;
  for (const id of ids) if (await store.findEvidence(accountId, id) !== undefined) found++;
  return found;
}

test(`two replicas, one PostgreSQL: a key works on both; ${N} requests at ${IN_FLIGHT} in flight: ledger == evidence, no lost or doubled row`, { skip: NO_SERVICES, timeout: 600_000 }, async (t) => {
  const { store, replicas } = await startCluster(t);
  const a = await newAccount(store, 1e9);
  const started = performance.now();
  const outcomes = await load(replicas, a.secrets, N, IN_FLIGHT);
  const seconds = (performance.now() - started) / 1000;
  t.diagnostic(`${N} requests at ${IN_FLIGHT} in flight over two replicas in ${seconds.toFixed(1)} s (${(N / seconds).toFixed(0)} req/s)`);
  const ok = outcomes.filter((o) => o.status === 200);
  assert.equal(ok.length, N, `statuses: ${JSON.stringify([...new Set(outcomes.map((o) => o.status))])}`);
  const ids = new Set(ok.map((o) => o.evidenceId));
  assert.equal(ids.size, N, 'every evidence id is unique');
  const month = (await store.allowance(a.id)).month;
  const total = await store.ledgerTotal(a.id, month);
  assert.equal(total.rows, N, 'one ledger row per answered request');
  const sum = Math.round(ok.reduce((n, o) => n + o.billable! * 1000, 0)) / 1000;
  assert.equal(total.joules, sum, 'ledger total == sum of the evidence the clients got');
  assert.equal((await store.allowance(a.id)).usedJoules, total.joules, 'the counter equals the ledger');
  const sample = ok.slice(0, 200).map((o) => o.evidenceId!);
  assert.equal(await ledgerIds(store, a.id, sample), sample.length);
});

test('an allowance spent through both replicas under load: Joules are reserved before each run, overspend at most one request\'s settlement, usage == ledger to the Joule', { skip: NO_SERVICES, timeout: 300_000 }, async (t) => {
  const { store, replicas } = await startCluster(t);
  const allowance = 100;
  const inFlight = 32;
  const a = await newAccount(store, allowance);
  // Each request states its ceiling (2 J), so each holds 2 J while it runs and 32 run at once.
  const outcomes = await load(replicas, a.secrets, 400, inFlight, undefined, () => ({ 'x-svc-max-joules': '2' }));
  const ok = outcomes.filter((o) => o.status === 200).length;
  const refused = outcomes.filter((o) => o.status === 402).length;
  assert.equal(ok + refused, 400);
  const month = (await store.allowance(a.id)).month;
  const total = await store.ledgerTotal(a.id, month);
  assert.equal(total.rows, ok);
  // Spent down until what is free cannot hold the prompt bound (0.85 J) and a token (0.5 J).
  assert.ok(total.joules >= allowance - 1.35, `spent ${total.joules} J`);
  // Each request cost less than it held, so the allowance is never passed at all.
  assert.ok(total.joules <= allowance + 1e-9, `overspend ${total.joules - allowance} J`);
  const usage = await fetch(`${replicas[1].url}/api/v1/usage`, { headers: { authorization: `Bearer ${a.secret}` } });
  const report = await usage.json() as { joules_used: number; joules_remaining: number; accounting_source: string };
  assert.equal(report.accounting_source, 'ledger');
  assert.equal(report.joules_used, total.joules);
  assert.equal(report.joules_remaining, Math.max(0, Math.round((allowance - total.joules) * 1000) / 1000));
});

test('50 concurrent requests through two replicas on a 20 J allowance: the sum billed is at most the allowance and one request', { skip: NO_SERVICES, timeout: 300_000 }, async (t) => {
  const { store, replicas } = await startCluster(t);
  const allowance = 20;
  const a = await newAccount(store, allowance, 10);
  // Half state a ceiling, half do not (they hold what their prompt bound and 4,096 tokens cost, or what is free).
  const outcomes = await load(replicas, a.secrets, 50, 50, undefined, (i): Record<string, string> => (i % 2 === 0 ? { 'x-svc-max-joules': '3' } : {}));
  const ok = outcomes.filter((o) => o.status === 200);
  assert.equal(ok.length + outcomes.filter((o) => o.status === 402).length, 50, `statuses: ${JSON.stringify([...new Set(outcomes.map((o) => o.status))])}`);
  assert.ok(ok.length >= 1);
  const billed = Math.round(ok.reduce((n, o) => n + o.billable! * 1000, 0)) / 1000;
  const total = await store.ledgerTotal(a.id, (await store.allowance(a.id)).month);
  assert.equal(total.joules, billed, 'the ledger holds what the clients were told');
  const most = Math.max(...ok.map((o) => o.billable!));
  assert.ok(billed <= allowance + most + 1e-9, `billed ${billed} J of a ${allowance} J allowance (one request: ${most} J)`);
});

test('kill -9 of one replica mid-load: every request answered 200 has its ledger row', { skip: NO_SERVICES, timeout: 300_000 }, async (t) => {
  const { store, replicas } = await startCluster(t);
  const a = await newAccount(store, 1e9);
  let killed: Promise<void> | undefined;
  const outcomes = await load(replicas, a.secrets, 600, 32, (done) => {
    if (done === 150) killed = replicas[0].kill('SIGKILL');
  });
  await killed;
  const ok = outcomes.filter((o) => o.status === 200);
  assert.ok(outcomes.some((o) => o.status !== 200), 'the kill cut some requests');
  assert.ok(ok.length > 150);
  assert.equal(await ledgerIds(store, a.id, ok.map((o) => o.evidenceId!)), ok.length, 'no 200 without its ledger row');
  const month = (await store.allowance(a.id)).month;
  const total = await store.ledgerTotal(a.id, month);
  assert.ok(total.rows >= ok.length, 'rows for answered requests (and possibly for ones billed as the replica died)');
  assert.equal((await store.allowance(a.id)).usedJoules, total.joules);
});

test('limits are shared through Redis: one key\'s burst is spent once across both replicas, not once per replica', { skip: NO_SERVICES, timeout: 120_000 }, async (t) => {
  // A burst of 10 and a slow refill: two replicas with their own buckets would admit 20.
  const { store, replicas } = await startCluster(t, { key: { requests_per_second: 0.5, burst: 10 } });
  const a = await newAccount(store, 1e9, 1);
  const started = performance.now();
  const outcomes = await load(replicas, [a.secret], 40, 4);
  const seconds = (performance.now() - started) / 1000;
  const admitted = outcomes.filter((o) => o.status === 200).length;
  const limited = outcomes.filter((o) => o.status === 429).length;
  assert.equal(admitted + limited, 40, `statuses: ${JSON.stringify([...new Set(outcomes.map((o) => o.status))])}`);
  // The burst, plus what refilled while the test ran (one every 2 s), plus one for the edge.
  assert.ok(admitted >= 10, `admitted ${admitted}`);
  assert.ok(admitted <= 10 + Math.floor(seconds * 0.5) + 1, `admitted ${admitted} in ${seconds.toFixed(1)} s: the replicas did not share the key's bucket`);
  const month = (await store.allowance(a.id)).month;
  assert.equal((await store.ledgerTotal(a.id, month)).rows, admitted, 'refused requests are not billed');
});

test('a key issued through one replica\'s /api/keys works on the other, and revoked through the other it stops on the first', { skip: NO_SERVICES, timeout: 120_000 }, async (t) => {
  const { store, replicas } = await startCluster(t);
  const account = await store.createAccount({ name: 'keys', plan: { monthlyJouleAllowance: 1e9, hostedEntitlement: true, enterprise: false } });
  const { token } = await store.createSignInToken(account.id, 60_000);
  const json = { 'content-type': 'application/json' };
  const signIn = await fetch(`${replicas[0].url}/api/session`, { method: 'POST', headers: json, body: JSON.stringify({ token }) });
  assert.equal(signIn.status, 200);
  const { session_token: session } = await signIn.json() as { session_token: string };
  const issued = await fetch(`${replicas[0].url}/api/keys`, { method: 'POST', headers: { ...json, authorization: `Bearer ${session}` }, body: JSON.stringify({ scope: 'supercomputer', name: 'replicated' }) });
  assert.equal(issued.status, 201);
  const key = await issued.json() as { id: string; secret: string };
  const chat = (replica: Replica) => fetch(`${replica.url}/api/v1/chat/completions`, {
    method: 'POST', headers: { ...json, authorization: `Bearer ${key.secret}` },
    body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'Say hello' }] }),
  });
  const onOther = await chat(replicas[1]);
  assert.equal(onOther.status, 200);
  await onOther.arrayBuffer();
  // The session works on the other replica too: it lives in the shared store.
  const revoked = await fetch(`${replicas[1].url}/api/keys`, { method: 'DELETE', headers: { ...json, authorization: `Bearer ${session}` }, body: JSON.stringify({ id: key.id }) });
  assert.equal(revoked.status, 200);
  await revoked.arrayBuffer();
  const after = await chat(replicas[0]);
  assert.equal(after.status, 401);
  assert.equal((await after.json() as { error: { code: string } }).error.code, 'svc_api_key_revoked');
});
