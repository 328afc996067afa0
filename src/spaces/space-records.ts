import type { DocumentRow } from './space-rows.ts';
import type { DocumentRecord } from './space-types.ts';

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
