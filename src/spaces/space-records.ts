import type { DocumentRow, SpaceRow } from './space-rows.ts';
import type { DocumentRecord, SpaceSearchDefaults } from './space-types.ts';

/** A space's search defaults as the row keeps them (`rerank` as JSON). */
export function searchDefaultsRow(defaults: SpaceSearchDefaults): Pick<SpaceRow, 'rerank' | 'rerank_depth'> {
  return { rerank: JSON.stringify(defaults.rerank), rerank_depth: defaults.rerank_depth };
}

/** A space row's search defaults; a `rerank` only svc writes, so anything but a boolean or a string reads as off. */
export function searchDefaultsOf(row: Pick<SpaceRow, 'rerank' | 'rerank_depth'>): SpaceSearchDefaults {
  let rerank: unknown = false;
  try {
    rerank = JSON.parse(row.rerank);
  } catch {
    // Left as off.
  }
  return { rerank: typeof rerank === 'boolean' || (typeof rerank === 'string' && rerank !== '') ? rerank : false, rerank_depth: row.rerank_depth };
}

/** A document's row as the library hands it out (the wire record). */
export function documentRecord(row: DocumentRow, space: string): DocumentRecord {
  return {
    id: row.public_id,
    space,
    title: row.title,
    source: row.source,
    format: row.format,
    metadata: JSON.parse(row.metadata) as DocumentRecord['metadata'],
    content_hash: row.content_hash,
    chunk_count: row.chunk_count,
    text_bytes: row.text_bytes,
    pages: row.pages,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}
