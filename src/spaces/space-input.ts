import { z } from 'zod';
import { ApiError } from '../shared/api-error.ts';
import { parseWithSchema } from '../shared/parse-with-schema.ts';
import { DOCUMENT_FORMATS, type ChunkDraft, type DocumentFormat } from './space-document.ts';
import { SEARCH_MODES, type SearchMode } from './space-types.ts';
import { spaceNameSchema } from './space-name.ts';

/**
 * What the library accepts, as zod schemas, and the error codes it answers for each part.
 * The library validates everything it is given (the routes, the CLI and chat all call it),
 * so a bad value is always a 400 with a code, never a failure deep in SQLite.
 */

export const MAX_METADATA_KEYS = 64;
export const MAX_METADATA_KEY_CHARS = 64;
export const MAX_METADATA_VALUE_CHARS = 1000;
export const MAX_QUERY_CHARS = 4000;
export const DEFAULT_TOP_K = 8;
export const MAX_TOP_K = 100;
export const MAX_FILTER_DOCUMENTS = 1000;
export const DEFAULT_PAGE_LIMIT = 100;
export const MAX_PAGE_LIMIT = 1000;

export type MetadataValue = string | number | boolean;
/** Metadata as entries: keys are user input, so never the keys of a plain object here. */
export type MetadataEntries = [string, MetadataValue][];

const metadataValueSchema = z.union([z.string().max(MAX_METADATA_VALUE_CHARS), z.number().refine(Number.isFinite, 'a finite number'), z.boolean()]);

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/**
 * A flat object of strings, numbers and booleans. Read with Object.entries, not z.record:
 * zod builds its output by assignment, and assigning `__proto__` drops the key (or swaps the
 * prototype), while JSON.parse made it an ordinary own key that a user may well mean.
 */
export const metadataObjectSchema = z
  .custom<Record<string, MetadataValue>>(isPlainObject, 'a flat object of strings, numbers and booleans')
  .superRefine((value, ctx) => {
    const entries = Object.entries(value);
    if (entries.length > MAX_METADATA_KEYS) ctx.addIssue({ code: 'custom', message: `at most ${MAX_METADATA_KEYS} keys` });
    for (const [key, item] of entries) {
      if (key.length === 0 || key.length > MAX_METADATA_KEY_CHARS) {
        ctx.addIssue({ code: 'custom', message: `keys are 1-${MAX_METADATA_KEY_CHARS} characters`, path: [key] });
      }
      const result = metadataValueSchema.safeParse(item);
      if (!result.success) {
        ctx.addIssue({ code: 'custom', message: `a string of at most ${MAX_METADATA_VALUE_CHARS} characters, a finite number or a boolean`, path: [key] });
      }
    }
  });
const metadataSchema = metadataObjectSchema.transform((value): MetadataEntries => Object.entries(value));

const chunkSchema = z.object({
  text: z.string().min(1),
  position: z.int().min(0),
  page: z.int().min(1).nullable(),
  headingPath: z.array(z.string().max(1000)).max(100),
});

const documentInputSchema = z.object({
  title: z.string().max(1000).nullish(),
  source: z.string().max(4000).nullish(),
  format: z.enum(DOCUMENT_FORMATS),
  metadata: metadataSchema.optional(),
  text: z.string(),
  chunks: z.array(chunkSchema).max(1_000_000).superRefine((chunks, ctx) => {
    const seen = new Set<number>();
    for (const [index, chunk] of chunks.entries()) {
      if (seen.has(chunk.position)) ctx.addIssue({ code: 'custom', message: 'positions are unique within a document', path: [index, 'position'] });
      seen.add(chunk.position);
    }
  }),
  pages: z.int().min(0).nullish(),
});

export interface ParsedDocumentInput {
  title: string | null;
  source: string | null;
  format: DocumentFormat;
  metadata: MetadataEntries;
  text: string;
  chunks: ChunkDraft[];
  pages: number | null;
}

/** A DocumentInput, or 400 `invalid_metadata` (its metadata) / `invalid_document` (anything else). */
export function parseDocumentInput(input: unknown): ParsedDocumentInput {
  const parsed = parseCoded(documentInputSchema, input, (param) => (param.startsWith('metadata') ? 'invalid_metadata' : 'invalid_document'));
  return {
    title: parsed.title ?? null,
    source: parsed.source ?? null,
    format: parsed.format,
    metadata: parsed.metadata ?? [],
    text: parsed.text,
    chunks: parsed.chunks,
    pages: parsed.pages ?? null,
  };
}

const searchRequestSchema = z.object({
  query: z
    .string()
    .max(MAX_QUERY_CHARS, `at most ${MAX_QUERY_CHARS} characters`)
    .refine((query) => query.trim() !== '', 'a query with something to search for'),
  mode: z.enum(SEARCH_MODES).default('hybrid'),
  top_k: z.int().min(1).max(MAX_TOP_K).default(DEFAULT_TOP_K),
  filter: z
    .object({
      document_ids: z.array(z.string().max(100)).max(MAX_FILTER_DOCUMENTS).optional(),
      metadata: metadataSchema.optional(),
    })
    .optional(),
  spaces: z.array(spaceNameSchema).min(1).max(1000).optional(),
});

export interface ParsedSearchRequest {
  query: string;
  mode: SearchMode;
  top_k: number;
  documentIds: string[] | null;
  metadata: MetadataEntries;
  spaces: string[] | null;
}

const SEARCH_CODES: [prefix: string, code: string][] = [
  ['query', 'invalid_query'],
  ['mode', 'invalid_search_mode'],
  ['top_k', 'invalid_top_k'],
  ['filter.metadata', 'invalid_metadata'],
  ['filter', 'invalid_filter'],
  ['spaces.', 'invalid_space_name'],
  ['spaces', 'invalid_spaces'],
];

/** A SearchRequest with its defaults, or 400 with the code of the part at fault. */
export function parseSearchRequest(request: unknown): ParsedSearchRequest {
  const parsed = parseCoded(searchRequestSchema, request, (param) => SEARCH_CODES.find(([prefix]) => param.startsWith(prefix))?.[1] ?? 'invalid_request');
  return {
    query: parsed.query,
    mode: parsed.mode,
    top_k: parsed.top_k,
    documentIds: parsed.filter?.document_ids ?? null,
    metadata: parsed.filter?.metadata ?? [],
    spaces: parsed.spaces ?? null,
  };
}

const pageSchema = z.object({
  limit: z.int().min(1).max(MAX_PAGE_LIMIT).default(DEFAULT_PAGE_LIMIT),
  after: z.string().min(1).max(100).optional(),
});

/** A listing page, or 400 `invalid_limit` / `invalid_cursor`. */
export function parsePage(page: unknown): { limit: number; after: string | null } {
  const parsed = parseCoded(pageSchema, page ?? {}, (param) => (param.startsWith('after') ? 'invalid_cursor' : 'invalid_limit'));
  return { limit: parsed.limit, after: parsed.after ?? null };
}

/** parseWithSchema's 400, with the stable code `codeFor` picks from the failing field's path. */
function parseCoded<S extends z.ZodType>(schema: S, value: unknown, codeFor: (param: string) => string): z.output<S> {
  try {
    return parseWithSchema(schema, value);
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    throw new ApiError({ ...error.toOptions(), code: codeFor(error.param ?? '') });
  }
}

/** A metadata value as stored for exact-match filters: JSON, so 1, "1" and true stay different. */
export function metadataValueKey(value: MetadataValue): string {
  return JSON.stringify(value);
}
