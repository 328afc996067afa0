/**
 * Makes the data dir that test/fixtures/data-dir-<version>/ holds: what svc of that version
 * leaves behind after a space with a document, an embedded hosted store with an account, a key
 * and a ledger row, a model listing (the GGUF index cache) and an ML-DSA transport identity.
 * Run once per release with that release's code, and commit the result with its manifest:
 *
 *   node test/helpers/make-data-dir.ts test/fixtures/data-dir-0.1.0
 *
 * The manifest (`<out>.json`) records what the test looks for (ids, the key's secret, the
 * identity's key id); the data dir itself holds only what svc wrote. The data is made in a
 * temporary folder first and copied, so nothing of svc's runs in the output folder, and the SQLite
 * files are vacuumed and checkpointed (no -wal or -shm) to keep the fixture small.
 */
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { lstat } from 'node:fs/promises';
import { DatabaseSync } from 'node:sqlite';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { openHostedStore } from '../../src/accounts/store/open-hosted-store.ts';
import { discoverModels } from '../../src/models/model-discovery.ts';
import { fileIdentity, GgufIndexCache } from '../../src/models/gguf-index-cache.ts';
import { newId } from '../../src/shared/new-id.ts';
import { SVC_VERSION } from '../../src/shared/version.ts';
import { textToDocument } from '../../src/spaces/ingest-document.ts';
import { openSpaceLibrary } from '../../src/spaces/space-library.ts';
import { loadTransportIdentity } from '../../src/transport/transport-identity.ts';
import { writeGgufFixture } from './gguf-fixtures.ts';

/** What the fixture's test reads back; written beside the data dir as `<out>.json`. */
export interface DataDirManifest {
  svcVersion: string;
  space: { name: string; documentId: string; query: string; phrase: string };
  hosted: { accountId: string; accountName: string; keyId: string; keySecret: string; evidenceId: string; billableJoules: number };
  model: { path: string; identity: string; name: string };
  transport: { algorithm: 'ml-dsa-65'; keyId: string; names: string[] };
}

const NOTE = '# Greenhouse notes\n\nThe tomato seedlings moved to the north greenhouse on Thursday.\n\nWater them every second morning.\n';

async function makeDataDir(dataDir: string): Promise<DataDirManifest> {
  const library = await openSpaceLibrary({ dataDir });
  await library.createSpace('garden');
  const { document } = await library.addDocument('garden', await textToDocument(NOTE, 'markdown', { title: 'Greenhouse notes', source: 'notes.md' }));
  await library.close();

  const store = await openHostedStore({ dataDir });
  const account = await store.createAccount({ name: 'Fixture Co', plan: { monthlyJouleAllowance: 1000, hostedEntitlement: true, enterprise: false } });
  const issued = await store.issueKey(account.id, { scope: 'supercomputer', name: 'fixture key' });
  const evidenceId = newId('ev_');
  await store.recordCharge({
    evidenceId,
    accountId: account.id,
    keyId: issued.key.id,
    projectId: null,
    idempotencyKey: 'fixture-1',
    promptTokens: 12,
    completionTokens: 34,
    outcome: 'completed',
    response: { id: 'chatcmpl-fixture', choices: [{ message: { content: 'hello' } }] },
    route: {
      execution_plane: 'supercomputer', policy: 'supercomputer-fast', privacy_tier: 'mesh_safe', model: 'svc-fast', provider: 'local-llama',
      latency_ms: 12.5, raw_joules: null, estimated_joules: 1.5, billable_joules: 1.5, fallback: false, fallback_reason: null, evidence_id: evidenceId,
    },
  });
  await store.close();

  const modelPath = writeGgufFixture(join(dataDir, 'models', 'fixture-model.gguf'), { name: 'Fixture Model', contextLength: 2048, embeddingLength: 64 });
  const listing = await discoverModels({ dataDir, sources: new Set() });
  if (!listing.models.some((m) => m.path === modelPath)) throw new Error(`the fixture model was not listed: ${JSON.stringify(listing)}`);
  const cache = await GgufIndexCache.load(GgufIndexCache.pathIn(dataDir));
  const identity = fileIdentity(await lstat(modelPath, { bigint: true }));
  if (cache.get(modelPath, identity) === undefined) throw new Error('the index cache holds no entry for the fixture model');

  const names = ['localhost', '127.0.0.1', '::1'];
  const transport = loadTransportIdentity({ dataDir, algorithm: 'ml-dsa-65', names });

  for (const file of [join(dataDir, 'spaces', 'spaces.db'), join(dataDir, 'hosted', 'hosted.db')]) {
    const db = new DatabaseSync(file);
    db.exec('VACUUM; PRAGMA wal_checkpoint(TRUNCATE);');
    db.close();
  }
  return {
    svcVersion: SVC_VERSION,
    space: { name: 'garden', documentId: document.id, query: 'tomato seedlings greenhouse', phrase: 'north greenhouse' },
    hosted: { accountId: account.id, accountName: account.name, keyId: issued.key.id, keySecret: issued.secret, evidenceId, billableJoules: 1.5 },
    model: { path: modelPath, identity, name: 'Fixture Model' },
    transport: { algorithm: 'ml-dsa-65', keyId: transport.keyId, names },
  };
}

/** Every file under `dir` that SQLite leaves only while a connection is open. */
function leftovers(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => /-(wal|shm|journal)$/.test(f) && statSync(join(dir, f)).isFile());
}

async function main(): Promise<void> {
  const out = process.argv[2];
  if (out === undefined) throw new Error('usage: node test/helpers/make-data-dir.ts <output folder>');
  const target = resolve(out);
  if (existsSync(target)) throw new Error(`${target} exists; remove it first (a fixture is made once per release)`);
  const work = mkdtempSync(join(tmpdir(), 'svc-fixture-'));
  const dataDir = join(work, 'data-dir');
  try {
    const manifest = await makeDataDir(dataDir);
    const left = leftovers(dataDir);
    if (left.length > 0) throw new Error(`SQLite left ${left.join(', ')} behind`);
    mkdirSync(target, { recursive: true });
    cpSync(dataDir, target, { recursive: true });
    writeFileSync(`${target}.json`, `${JSON.stringify(manifest, null, 2)}\n`);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

if (import.meta.main) await main();
