/**
 * Upgrades keep data (docs/runtime.md, "Upgrades and data"): a data dir svc 0.1.0 wrote
 * (test/fixtures/data-dir-0.1.0, made by test/helpers/make-data-dir.ts) opens with this build,
 * every store as svc serve and svc hosted open it at start, with its data there and its version
 * stamped; opening again changes nothing; a store stamped newer than this build knows is refused
 * with one clear line and its bytes left as they were; and `svc serve` starts on a copy.
 */
import assert from 'node:assert/strict';
import { chmodSync, cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { test } from 'node:test';
import pg from 'pg';
import { hostedMigrationNames } from '../../src/accounts/store/hosted-migrations.ts';
import { openHostedStore } from '../../src/accounts/store/open-hosted-store.ts';
import { GgufIndexCache } from '../../src/models/gguf-index-cache.ts';
import { discoverModels } from '../../src/models/model-discovery.ts';
import { ResponseStore } from '../../src/openai/response-store.ts';
import { StoreVersionError } from '../../src/shared/store-version.ts';
import { openSpaceLibrary } from '../../src/spaces/space-library.ts';
import { loadTransportIdentity } from '../../src/transport/transport-identity.ts';
import { runCliToEnd, startDaemon } from '../helpers/daemon-process.ts';
import { freshPostgresSchema } from '../helpers/hosted-stores.ts';
import type { DataDirManifest } from '../helpers/make-data-dir.ts';
import { postgresUnavailable, TEST_DATABASE_URL } from '../helpers/test-services.ts';

const FIXTURE = new URL('../fixtures/data-dir-0.1.0', import.meta.url).pathname;
const manifest = JSON.parse(readFileSync(`${FIXTURE}.json`, 'utf8')) as DataDirManifest;
const NO_POSTGRES = await postgresUnavailable('the data-dir upgrade test of a newer PostgreSQL hosted store');

/** A copy of the fixture, private as svc keeps it (git checks files out 0644, which the key refuses). */
function copyFixture(t: { after: (fn: () => void) => void }): string {
  const root = mkdtempSync(join(tmpdir(), 'svc-upgrade-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const dataDir = join(root, 'data');
  cpSync(FIXTURE, dataDir, { recursive: true });
  chmodSync(dataDir, 0o700);
  for (const entry of readdirSync(dataDir, { recursive: true, encoding: 'utf8' })) {
    const path = join(dataDir, entry);
    chmodSync(path, statSync(path).isDirectory() ? 0o700 : 0o600);
  }
  return dataDir;
}

const paths = (dataDir: string) => ({
  spaces: join(dataDir, 'spaces', 'spaces.db'),
  hosted: join(dataDir, 'hosted', 'hosted.db'),
  cache: GgufIndexCache.pathIn(dataDir),
  key: join(dataDir, 'transport', 'identity-ml-dsa-65.key'),
  certificate: join(dataDir, 'transport', 'identity-ml-dsa-65.crt'),
  transportVersion: join(dataDir, 'transport', 'version'),
});

/** Reads (or, given `write`, changes) a SQLite file outside svc, leaving no -wal or -shm behind. */
function sqlite<T>(path: string, fn: (db: DatabaseSync) => T): T {
  const db = new DatabaseSync(path);
  try {
    return fn(db);
  } finally {
    db.close();
  }
}

const userVersion = (path: string): number => sqlite(path, (db) => Number((db.prepare('PRAGMA user_version').get() as { user_version: number }).user_version));
const migrationRows = (path: string): unknown[] => sqlite(path, (db) => db.prepare('select name, timestamp from kysely_migration order by name').all());
/** The spaces store's version this build writes (space-store-schema.ts): svc 0.1.0 wrote 1. */
const SPACES_VERSION = 2;
const schemaSql = (path: string): unknown[] => sqlite(path, (db) => db.prepare('select type, name, sql from sqlite_master order by type, name').all());

/** Opens each store as svc serve and svc hosted do at start, and checks what the fixture holds. */
async function openEveryStore(dataDir: string): Promise<void> {
  const library = await openSpaceLibrary({ dataDir });
  try {
    const [space] = await library.listSpaces();
    assert.equal(space?.name, manifest.space.name);
    assert.equal(space.document_count, 1);
    // Search defaults came with spaces store version 2: the old space has none, so it searches as it did.
    assert.deepEqual([space.rerank, space.rerank_depth], [false, null]);
    const results = await library.search(manifest.space.name, { query: manifest.space.query });
    assert.equal(results[0]?.document_id, manifest.space.documentId);
    assert.ok(results[0].text.includes(manifest.space.phrase));
  } finally {
    await library.close();
  }

  const store = await openHostedStore({ dataDir });
  try {
    const check = await store.checkKey(manifest.hosted.keySecret);
    assert.equal(check.status, 'valid');
    assert.ok(check.status === 'valid');
    assert.equal(check.account.id, manifest.hosted.accountId);
    assert.equal(check.account.name, manifest.hosted.accountName);
    assert.equal(check.key.id, manifest.hosted.keyId);
    const entry = await store.findEvidence(manifest.hosted.accountId, manifest.hosted.evidenceId);
    assert.equal(entry?.route.billable_joules, manifest.hosted.billableJoules);
  } finally {
    await store.close();
  }

  const identity = loadTransportIdentity({ dataDir, algorithm: manifest.transport.algorithm, names: manifest.transport.names });
  assert.equal(identity.keyId, manifest.transport.keyId, 'the same identity: pinned clients keep trusting it');
}

test('a data dir svc 0.1.0 wrote opens with every store: the data is there and versions are stamped', async (t) => {
  const dataDir = copyFixture(t);
  const at = paths(dataDir);
  assert.equal(existsSync(at.transportVersion), false, 'svc 0.1.0 wrote no transport version');

  // The index cache is read, not thrown away: the fixture's entry answers for its file.
  const cache = await GgufIndexCache.load(at.cache);
  assert.equal(cache.notice, undefined);
  const header = cache.get(manifest.model.path, manifest.model.identity);
  assert.ok(header?.ok === true, 'the cached header is used');
  assert.equal(header.summary.name, manifest.model.name);

  await openEveryStore(dataDir);

  assert.equal(userVersion(at.spaces), SPACES_VERSION);
  // The one step from 1 to 2 added the search defaults' columns with their defaults.
  assert.deepEqual(sqlite(at.spaces, (db) => db.prepare('select name, rerank, rerank_depth from spaces').all().map((r) => ({ ...r }))), [{ name: manifest.space.name, rerank: 'false', rerank_depth: null }]);
  assert.deepEqual((migrationRows(at.hosted) as { name: string }[]).map((r) => r.name), hostedMigrationNames('sqlite'));
  assert.equal(readFileSync(at.transportVersion, 'utf8'), '1\n');
  assert.equal(statSync(at.transportVersion).mode & 0o777, 0o600);

  // A listing of the copy lists the model (its header read again: the copy is another file) and keeps format 1.
  const listing = await discoverModels({ dataDir, sources: new Set() });
  assert.deepEqual(listing.warnings, []);
  assert.deepEqual(listing.models.map((m) => m.id), ['fixture-model']);
  assert.equal((JSON.parse(readFileSync(at.cache, 'utf8')) as { format: number }).format, 1);
});

test('opening a migrated data dir again is a no-op: versions, schemas and the identity files stay as they are', async (t) => {
  const dataDir = copyFixture(t);
  const at = paths(dataDir);
  await openEveryStore(dataDir);
  const before = {
    spaces: [userVersion(at.spaces), schemaSql(at.spaces)],
    hosted: [migrationRows(at.hosted), schemaSql(at.hosted)],
    transport: [readFileSync(at.transportVersion), statSync(at.transportVersion).mtimeMs, readFileSync(at.key), readFileSync(at.certificate)],
  };
  await openEveryStore(dataDir);
  assert.deepEqual({
    spaces: [userVersion(at.spaces), schemaSql(at.spaces)],
    hosted: [migrationRows(at.hosted), schemaSql(at.hosted)],
    transport: [readFileSync(at.transportVersion), statSync(at.transportVersion).mtimeMs, readFileSync(at.key), readFileSync(at.certificate)],
  }, before);
});

/** The refusal `open` rejects with, after checking that `files` kept every byte. */
async function refusedUnchanged(files: string[], open: () => unknown): Promise<StoreVersionError> {
  const bytes = files.map((f) => readFileSync(f));
  let refusal: unknown;
  try {
    await open();
  } catch (error) {
    refusal = error;
  }
  assert.ok(refusal instanceof StoreVersionError, `refused with a StoreVersionError, not ${String(refusal)}`);
  files.forEach((f, i) => assert.ok(readFileSync(f).equals(bytes[i]!), `${f} is unchanged`));
  assert.doesNotMatch(refusal.message, /\n/);
  return refusal;
}

test('a spaces store stamped newer than this svc knows is refused, naming it, and left byte for byte', async (t) => {
  const dataDir = copyFixture(t);
  const { spaces } = paths(dataDir);
  sqlite(spaces, (db) => db.exec(`PRAGMA user_version = ${SPACES_VERSION + 1}`));
  const error = await refusedUnchanged([spaces], () => openSpaceLibrary({ dataDir }));
  assert.equal(error.message.startsWith(`spaces store ${spaces} has schema version ${SPACES_VERSION + 1}, newer than this svc (`), true, error.message);
  assert.match(error.message, new RegExp(`knows \\(${SPACES_VERSION}\\): a newer svc wrote it\\. Upgrade svc to open it`));
  assert.equal(existsSync(`${spaces}-wal`), false);
});

test('the responses store (new since 0.1.0) is made in an old data dir, and one stamped newer is refused and left byte for byte', async (t) => {
  const dataDir = copyFixture(t);
  const responses = ResponseStore.pathIn(dataDir);
  assert.equal(existsSync(responses), false);
  ResponseStore.open(responses, { retentionMs: 60_000, maxBytes: 1024 }).close();
  assert.equal(userVersion(responses), 1);
  sqlite(responses, (db) => db.exec('PRAGMA user_version = 2'));
  const error = await refusedUnchanged([responses], () => ResponseStore.open(responses, { retentionMs: 60_000, maxBytes: 1024 }));
  assert.equal(error.message.startsWith(`responses store ${responses} has schema version 2, newer than this svc (`), true, error.message);
  assert.match(error.message, /knows \(1\): a newer svc wrote it\. Upgrade svc to open it/);
});

test('a hosted store with a migration this svc does not have is refused before the Migrator runs, and left byte for byte', async (t) => {
  const dataDir = copyFixture(t);
  const { hosted } = paths(dataDir);
  sqlite(hosted, (db) => db.prepare('insert into kysely_migration (name, timestamp) values (?, ?)').run('0099_from_the_future', new Date().toISOString()));
  const error = await refusedUnchanged([hosted], () => openHostedStore({ dataDir }));
  assert.equal(error.message.startsWith(`hosted store ${hosted} has schema version 0099_from_the_future (1 migration this svc does not have), newer than this svc`), true, error.message);
  assert.match(error.message, /knows \(0005_joule_reservations\)/);
});

test('a transport identity stamped newer (or with an unreadable version) is refused before its folder is touched', async (t) => {
  const dataDir = copyFixture(t);
  const at = paths(dataDir);
  const open = () => loadTransportIdentity({ dataDir, algorithm: 'ml-dsa-65', names: ['localhost', 'example.test'] });
  for (const marker of ['2\n', 'two\n']) {
    writeFileSync(at.transportVersion, marker, { mode: 0o600 });
    const error = await refusedUnchanged([at.key, at.certificate, at.transportVersion], open);
    assert.equal(error.store, 'transport identity');
    assert.equal(error.file, at.transportVersion);
    assert.match(error.message, marker === '2\n' ? /has schema version 2, newer than this svc/ : /cannot read \("two\\n"; it knows up to 1\)/);
  }
});

test('a model index cache of a newer format is left untouched: headers are read, the listing says why', async (t) => {
  const dataDir = copyFixture(t);
  const { cache } = paths(dataDir);
  writeFileSync(cache, JSON.stringify({ format: 2, entries: { elsewhere: { identity: 'x', header: 'whatever format 2 keeps' } } }));
  const bytes = readFileSync(cache);
  const listing = await discoverModels({ dataDir, sources: new Set() });
  assert.deepEqual(listing.models.map((m) => m.id), ['fixture-model'], 'the model is listed from its header');
  assert.equal(listing.headersRead, 1);
  assert.deepEqual(listing.warnings, [`the model index cache ${cache} has format 2, newer than this svc knows (1): a newer svc wrote it; it is left as it is and model headers are read on each listing (upgrade svc to use it)`]);
  assert.ok(readFileSync(cache).equals(bytes));
});

test('a PostgreSQL hosted store with a migration this svc does not have is refused, naming the database without its credentials', { skip: NO_POSTGRES }, async (t) => {
  const { schema, drop } = freshPostgresSchema();
  t.after(drop);
  const options = { dataDir: mkdtempSync(join(tmpdir(), 'svc-upgrade-pg-')), databaseUrl: TEST_DATABASE_URL, schema };
  t.after(() => rmSync(options.dataDir, { recursive: true, force: true }));
  await (await openHostedStore(options)).close();
  // Migrating again is a no-op.
  await (await openHostedStore(options)).close();
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await client.connect();
  try {
    const names = (await client.query<{ name: string }>(`select name from ${schema}.kysely_migration order by name`)).rows.map((r) => r.name);
    assert.deepEqual(names, hostedMigrationNames('postgres'));
    await client.query(`insert into ${schema}.kysely_migration (name, timestamp) values ('0099_from_the_future', now()::text)`);
  } finally {
    await client.end();
  }
  let refusal: unknown;
  try {
    await openHostedStore(options);
  } catch (error) {
    refusal = error;
  }
  assert.ok(refusal instanceof StoreVersionError, String(refusal));
  const url = new URL(TEST_DATABASE_URL);
  assert.equal(refusal.file, `PostgreSQL ${url.host}${url.pathname} (schema ${schema})`);
  assert.match(refusal.message, /has schema version 0099_from_the_future \(1 migration this svc does not have\), newer than this svc/);
  if (url.username !== '') assert.doesNotMatch(refusal.message, new RegExp(`${url.username}@`));
});

/** One request over HTTPS, trusting only `ca`. */
function getHttps(url: string, ca: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    httpsRequest(url, { ca, agent: false }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => { body += d.toString(); });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    }).on('error', reject).end();
  });
}

function postHttps(url: string, ca: string, json: unknown): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    httpsRequest(url, { method: 'POST', ca, agent: false, headers: { 'content-type': 'application/json' } }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => { body += d.toString(); });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    }).on('error', reject).end(JSON.stringify(json));
  });
}

test('svc serve starts on a copy of the 0.1.0 data dir: its space searchable, its model listed, its identity the same', async (t) => {
  const dataDir = copyFixture(t);
  const daemon = await startDaemon({ withModel: false, args: ['--data-dir', dataDir, '--pqc-transport', 'ml-kem-768,ml-dsa-65', '--host', '127.0.0.1'] });
  t.after(() => daemon.stop());
  const ca = readFileSync(paths(dataDir).certificate, 'utf8');
  const identity = JSON.parse((await getHttps(`${daemon.url}/transport/identity`, ca)).body) as { key_id: string };
  assert.equal(identity.key_id, manifest.transport.keyId);
  const spaces = JSON.parse((await getHttps(`${daemon.url}/api/spaces`, ca)).body) as { data: { name: string; document_count: number; rerank: unknown; rerank_depth: unknown }[] };
  assert.deepEqual(spaces.data.map((s) => [s.name, s.document_count, s.rerank, s.rerank_depth]), [[manifest.space.name, 1, false, null]]);
  const search = await postHttps(`${daemon.url}/api/spaces/${manifest.space.name}/search`, ca, { query: manifest.space.query });
  assert.equal(search.status, 200, search.body);
  assert.equal((JSON.parse(search.body) as { data: { document_id: string }[] }).data[0]?.document_id, manifest.space.documentId);
  const models = JSON.parse((await getHttps(`${daemon.url}/v1/models`, ca)).body) as { data: { id: string }[] };
  assert.ok(models.data.some((m) => m.id === 'fixture-model'), JSON.stringify(models));
  assert.equal(await daemon.stop(), 0);
  assert.equal(userVersion(paths(dataDir).spaces), SPACES_VERSION);
  assert.equal(readFileSync(paths(dataDir).transportVersion, 'utf8'), '1\n');
});

test('svc serve on a data dir a newer svc wrote exits with one line naming the store, and starts nothing', async (t) => {
  const dataDir = copyFixture(t);
  const { spaces } = paths(dataDir);
  sqlite(spaces, (db) => db.exec('PRAGMA user_version = 7'));
  const bytes = readFileSync(spaces);
  const run = await runCliToEnd(['serve', '--port', '0', '--data-dir', dataDir]);
  // A start failure exits 1, as every other one (src/cli/run-server.ts).
  assert.equal(run.code, 1, run.stderr);
  const lines = run.stderr.trim().split('\n');
  assert.equal(lines.length, 1, run.stderr);
  assert.match(lines[0]!, new RegExp(`^svc serve: cannot start: spaces store ${spaces.replaceAll('/', '\\/').replaceAll('.', '\\.')} has schema version 7, newer than this svc \\(.+\\) knows \\(${SPACES_VERSION}\\): a newer svc wrote it\\. Upgrade svc to open it`));
  assert.ok(readFileSync(spaces).equals(bytes));
});
