/**
 * LanceDB (the store AnythingLLM uses) as a peer for bench/spaces.ts: the same chunks and vectors
 * svc's space holds, read out of its SQLite file, in a LanceDB table in process, searched the way
 * LanceDB searches hybrid: its full-text index and a vector search fused by its RRF reranker.
 *
 * LanceDB is not a dependency of svc (230 MB of native code): install it beside the checkout,
 * `npm install --no-save @lancedb/lancedb apache-arrow`, or anywhere and pass the folder that
 * holds its node_modules with `--peer-modules <dir>`.
 */
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';

/* eslint-disable @typescript-eslint/no-explicit-any -- LanceDB is loaded at run time, untyped here */
type Lance = any;

export interface PeerHit {
  document_id: string;
  text: string;
}

export interface LanceDbPeer {
  rows: number;
  /** Seconds to write the table and build its full-text index. */
  buildSeconds: number;
  search(text: string, vector: Float32Array, k: number): Promise<PeerHit[]>;
}

/** LanceDB from `modulesDir` (or from the checkout), or null with why when it is not installed. */
export function loadLanceDb(modulesDir: string | undefined): { lancedb: Lance } | { missing: string } {
  const from = join(modulesDir ?? process.cwd(), 'package.json');
  // Its logger (env_logger, read at load) warns on every hybrid query about a future change of columns.
  process.env.LANCEDB_LOG ??= 'error';
  try {
    return { lancedb: createRequire(from)('@lancedb/lancedb') };
  } catch (error) {
    return { missing: `@lancedb/lancedb did not load from ${from} (${(error as Error).message.split('\n')[0]}): npm install --no-save @lancedb/lancedb apache-arrow` };
  }
}

const BATCH = 10_000;

/**
 * Copies the space's chunks (document public id, text, vector) from svc's spaces.db into a
 * LanceDB table in `dir`, with a full-text index over the text. No vector index: LanceDB searches
 * vectors by a flat scan until one is built, and AnythingLLM builds none.
 */
export async function buildLanceDbPeer(lancedb: Lance, spacesDb: string, spaceName: string, dir: string): Promise<LanceDbPeer> {
  const started = performance.now();
  const db = new DatabaseSync(spacesDb, { readOnly: true });
  const connection = await lancedb.connect(dir);
  let table: Lance = null;
  let rows = 0;
  try {
    const space = db.prepare('SELECT id FROM spaces WHERE name = ?').get(spaceName) as { id: number } | undefined;
    if (space === undefined) throw new Error(`lancedb peer: no space ${spaceName}`);
    const select = db.prepare(
      `SELECT d.public_id AS document_id, c.text AS text, v.vector AS vector FROM chunks c
       JOIN documents d ON d.id = c.document_id JOIN chunk_vectors v ON v.chunk_id = c.id WHERE c.space_id = ? ORDER BY c.id`,
    );
    let batch: Record<string, unknown>[] = [];
    const flush = async () => {
      if (batch.length === 0) return;
      if (table === null) table = await connection.createTable('chunks', batch, { mode: 'overwrite' });
      else await table.add(batch);
      rows += batch.length;
      batch = [];
    };
    for (const row of select.iterate(space.id)) {
      const { document_id, text, vector } = row as { document_id: string; text: string; vector: Uint8Array };
      batch.push({ document_id, text, vector: Array.from(new Float32Array(vector.slice().buffer)) });
      if (batch.length === BATCH) await flush();
    }
    await flush();
  } finally {
    db.close();
  }
  await table.createIndex('text', { config: lancedb.Index.fts() });
  const reranker = await lancedb.rerankers.RRFReranker.create();
  return {
    rows,
    buildSeconds: (performance.now() - started) / 1000,
    async search(text, vector, k) {
      const found = await table.query().fullTextSearch(text).nearestTo(vector).rerank(reranker).select(['document_id', 'text']).limit(k).toArray();
      return (found as PeerHit[]).map((hit) => ({ document_id: hit.document_id, text: hit.text }));
    },
  };
}
