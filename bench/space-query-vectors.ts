import type { DatabaseSync } from 'node:sqlite';
import { queryWeightWords, type HashedEmbedder } from '../src/spaces/hashed-embedder.ts';

/**
 * Query vectors made as svc's search makes them for a space (space-search.ts): the built-in
 * embedder weighing each query word by the space's idf, read from spaces.db's word statistics.
 * For benches that search the same vectors outside the library (a peer, a recall check).
 */
export function spaceQueryVectors(db: DatabaseSync, spaceName: string, embedder: HashedEmbedder, queries: readonly string[]): Float32Array[] {
  const space = db.prepare('SELECT id, chunk_count FROM spaces WHERE name = ?').get(spaceName) as { id: number; chunk_count: number } | undefined;
  if (space === undefined) throw new Error(`no space ${spaceName} in this spaces.db`);
  const df = db.prepare('SELECT df FROM space_words WHERE space_id = ? AND word = ?');
  return queries.map((query) => {
    const frequencies = new Map(queryWeightWords(query).map((word) => [word, (df.get(space.id, word) as { df: number } | undefined)?.df ?? 0]));
    return embedder.queryVector(query, (word) => frequencies.get(word) ?? 0, space.chunk_count);
  });
}
