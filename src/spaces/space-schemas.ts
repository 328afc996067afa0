import { z } from 'zod';
import { MAX_FILTER_DOCUMENTS, MAX_PAGE_LIMIT, MAX_QUERY_CHARS, MAX_TOP_K, metadataObjectSchema } from './space-input.ts';
import { SEARCH_MODES } from './space-types.ts';

/**
 * Request bodies of the spaces API, one zod source for routes and CLI. Objects are strict: an
 * unknown field is a 400 naming it (as the OpenAI routes answer), never silently ignored.
 */
/** The library's own metadata check (it keeps a `__proto__` key as the key it is, where z.record would drop it). */
export const metadataSchema = metadataObjectSchema;

/** A second stage: `true` (the daemon's first reranker) or a reranker model's id (space-reranker.ts). */
const rerankField = z.union([z.boolean(), z.string().min(1).max(2048)], { error: 'rerank takes true, false or a reranker model id' });
/** How many fused candidates the reranker reads (default 30, at least top_k). */
const rerankDepthField = z.number().int().min(1).max(MAX_TOP_K);

/** A space's search defaults (SpaceSearchDefaults): `rerank_depth: null` goes back to the search default. */
export const spaceDefaultsSchema = z.strictObject({
  rerank: rerankField.optional(),
  rerank_depth: rerankDepthField.nullable().optional(),
});

export const createSpaceSchema = z.strictObject({ name: z.string(), ...spaceDefaultsSchema.shape });
/** `PATCH /api/spaces/:name`: the search defaults only (a space is not renamed). */
export const updateSpaceSchema = spaceDefaultsSchema;

/** `text` documents are plain text or Markdown; files go through multipart uploads. */
export const addTextDocumentSchema = z.strictObject({
  text: z.string(),
  title: z.string().max(500).nullish(),
  source: z.string().max(2000).nullish(),
  format: z.enum(['text', 'markdown']).nullish(),
  metadata: metadataSchema.nullish(),
});
export type AddTextDocument = z.infer<typeof addTextDocumentSchema>;


const searchFields = {
  query: z.string().max(MAX_QUERY_CHARS, `query is at most ${MAX_QUERY_CHARS} characters`),
  mode: z.enum(SEARCH_MODES).nullish(),
  top_k: z.number().int().min(1).max(MAX_TOP_K).nullish(),
  /** Absent: the searched spaces' default (space-reranker.ts, rerankPlan); `false`: none. */
  rerank: rerankField.nullish(),
  rerank_depth: rerankDepthField.nullish(),
  filter: z
    .strictObject({
      document_ids: z.array(z.string().max(100)).max(MAX_FILTER_DOCUMENTS).nullish(),
      metadata: metadataSchema.nullish(),
    })
    .nullish(),
};

export const searchSchema = z.strictObject(searchFields);
export const searchAllSchema = z.strictObject({ ...searchFields, spaces: z.array(z.string()).min(1).max(100).nullish() });

/** `limit`/`after` of a listing page: a space's documents, a document's chunks. */
export const pageQuerySchema = z.strictObject({
  limit: z.coerce.number().int().min(1).max(MAX_PAGE_LIMIT).optional(),
  after: z.string().max(100).optional(),
});

export const getDocumentQuerySchema = z.strictObject({
  // `chunks` was an option here before chunks had their own paged listing: the message says where they went.
  include: z.enum(['text'], { error: 'include takes "text"; a document\'s chunks are listed, a page at a time, by GET /api/spaces/:name/documents/:id/chunks.' }).optional(),
});

export const uploadQuerySchema = z.strictObject({
  wait: z.enum(['true', 'false']).optional(),
});
