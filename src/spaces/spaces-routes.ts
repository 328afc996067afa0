import multipart from '@fastify/multipart';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from '../shared/api-error.ts';
import { parseWithSchema } from '../shared/parse-with-schema.ts';
import { fileToDocument, textToDocument, type DocumentFields, type UploadedFile } from './ingest-document.ts';
import type { IngestJobs } from './ingest-jobs.ts';
import {
  addTextDocumentSchema, createSpaceSchema, getDocumentQuerySchema, pageQuerySchema, metadataSchema,
  searchAllSchema, searchSchema, updateSpaceSchema, uploadQuerySchema,
} from './space-schemas.ts';
import { DEFAULT_TOP_K } from './space-input.ts';
import { rerankPlan, rerankResults, type Reranker, type RerankPlan } from './space-reranker.ts';
import type { DocumentInput, SearchRequest, SearchResult, SpaceLibrary, SpaceRecord } from './space-types.ts';
import { quoteInput } from '../shared/quote-input.ts';
import { validateUploadFilename } from './upload-filename.ts';

/**
 * The knowledge-space API as a Fastify plugin, mounted under `/api` by the daemon
 * (docs/spaces.md). JSON documents are ingested at once; multipart uploads become ingest jobs
 * (202 with the job; `?wait=true` answers when it has finished). The library does the work and
 * throws ApiErrors; the app's one error handler turns them into the envelope.
 */
export interface SpacesRoutesOptions {
  library: SpaceLibrary;
  jobs: IngestJobs;
  /** Largest file accepted in an upload, bytes. */
  maxFileBytes: number;
  /** Most files in one upload request. */
  maxFiles: number;
  /** Most bytes of files in one upload request (they are held in memory while extracted). */
  maxUploadBytes: number;
  /** Largest JSON body (a `text` document), bytes. */
  maxJsonBytes: number;
  /** The reranker a search's `rerank` names (`true`: the daemon's first); throws the 400 when there is none. */
  reranker?: ((choice: true | string) => Reranker) | undefined;
}

interface NameParams { name: string }
interface DocumentParams { name: string; id: string }

/** What a multipart request carried: the files in memory and the document fields beside them. */
interface MultipartUpload {
  files: UploadedFile[];
  fields: DocumentFields;
}

function searchRequest(body: { query: string; mode?: SearchRequest['mode'] | null; top_k?: number | null; filter?: { document_ids?: string[] | null; metadata?: Record<string, string | number | boolean> | null } | null }): SearchRequest {
  const filter = body.filter == null
    ? undefined
    : {
        ...(body.filter.document_ids == null ? {} : { document_ids: body.filter.document_ids }),
        ...(body.filter.metadata == null ? {} : { metadata: body.filter.metadata }),
      };
  return {
    query: body.query,
    ...(body.mode == null ? {} : { mode: body.mode }),
    ...(body.top_k == null ? {} : { top_k: body.top_k }),
    ...(filter === undefined ? {} : { filter }),
  };
}

function fieldsOf(body: { title?: string | null | undefined; source?: string | null | undefined; metadata?: Record<string, string | number | boolean> | null | undefined }): DocumentFields {
  return { title: body.title ?? null, source: body.source ?? null, metadata: body.metadata ?? {} };
}

export async function spacesRoutes(app: FastifyInstance, options: SpacesRoutesOptions): Promise<void> {
  const { library, jobs } = options;
  await app.register(multipart, {
    // Multipart is parsed by its own streaming parser, outside bodyLimit: every limit is set here.
    // preservePath: busboy would otherwise cut `../../etc/passwd` to `passwd` silently; the name
    // is checked (and a path refused) by validateUploadFilename instead.
    preservePath: true,
    limits: { fileSize: options.maxFileBytes, files: options.maxFiles, fields: 16, fieldSize: 64 * 1024, parts: options.maxFiles + 16, headerPairs: 100 },
  });

  app.get('/spaces', async () => ({ object: 'list', data: await library.listSpaces() }));

  /** The reranker `choice` names, or the 400 a search asking for it would get. */
  const rerankerFor = (choice: true | string): Reranker => {
    if (options.reranker === undefined) throw ApiError.invalidRequest('rerank is not available here: no models are served beside these spaces.', 'rerank', 'no_reranker');
    return options.reranker(choice);
  };
  // A rerank default is checked when it is set, as a search naming it would be: a typo is refused
  // now, not at every later search. (A model removed later makes those searches 400, see below.)
  const checkDefault = (rerank: boolean | string | undefined) => {
    if (rerank !== undefined && rerank !== false) rerankerFor(rerank);
  };

  app.post('/spaces', async (request, reply) => {
    const { name, ...defaults } = parseWithSchema(createSpaceSchema, request.body);
    checkDefault(defaults.rerank);
    const space = await library.createSpace(name, defaults);
    return reply.code(201).send(space);
  });

  app.get<{ Params: NameParams }>('/spaces/:name', async (request) => library.getSpace(request.params.name));

  app.patch<{ Params: NameParams }>('/spaces/:name', async (request) => {
    const changes = parseWithSchema(updateSpaceSchema, request.body ?? {});
    checkDefault(changes.rerank);
    return library.updateSpace(request.params.name, changes);
  });

  app.delete<{ Params: NameParams }>('/spaces/:name', async (request) => {
    const space = await library.getSpace(request.params.name);
    await library.deleteSpace(space.name);
    return { object: 'space.deleted', name: space.name, deleted: true };
  });

  /** The reranker of `plan`; when it is the spaces' default, its 400 says so and how to search without it. */
  const planReranker = (plan: RerankPlan): Reranker => {
    try {
      return rerankerFor(plan.choice);
    } catch (error) {
      if (plan.from === 'request' || !(error instanceof ApiError)) throw error;
      const whose = plan.from.length === 1 ? `space ${quoteInput(plan.from[0]!)}` : `every space searched (${plan.from.map((name) => quoteInput(name)).join(', ')})`;
      throw new ApiError({ ...error.toOptions(), message: `${error.message} The rerank comes from the default of ${whose}: search with "rerank": false to skip it, or change the default with PATCH /api/spaces/:name.` });
    }
  };

  /**
   * Fused search, then the rerank stage when the request or the searched spaces' defaults ask
   * for it (rerankPlan): the library fuses `depth` candidates and the reranker keeps the best
   * top_k of them by its own score.
   */
  const reranked = async (request: FastifyRequest, body: { query: string; top_k?: number | null; rerank?: boolean | string | null; rerank_depth?: number | null }, spaces: () => Promise<SpaceRecord[]>, run: (request: SearchRequest) => Promise<SearchResult[]>, fields: SearchRequest): Promise<{ data: SearchResult[]; reranker?: string }> => {
    const topK = body.top_k ?? DEFAULT_TOP_K;
    const plan = body.rerank === false ? null : rerankPlan(body, topK, await spaces());
    if (plan === null) return { data: await searching(request, () => run(fields)) };
    // Chosen before the search, so a bad choice costs nothing.
    const reranker = planReranker(plan);
    const data = await searching(request, async () => rerankResults(await run({ ...fields, top_k: plan.depth }), body.query, reranker, topK));
    return { reranker: reranker.id, data };
  };

  app.post<{ Params: NameParams }>('/spaces/:name/search', async (request) => {
    const body = parseWithSchema(searchSchema, request.body);
    const space = request.params.name;
    const results = await reranked(request, body, async () => [await library.getSpace(space)], (fields) => library.search(space, fields), searchRequest(body));
    return { object: 'list', space, query: body.query, mode: body.mode ?? 'hybrid', ...results };
  });

  app.post('/search', async (request) => {
    const body = parseWithSchema(searchAllSchema, request.body);
    const fields = { ...searchRequest(body), ...(body.spaces == null ? {} : { spaces: body.spaces }) };
    const searched = async () => (body.spaces == null ? library.listSpaces() : Promise.all(body.spaces.map((name) => library.getSpace(name))));
    const results = await reranked(request, body, searched, (all) => library.searchAll(all), fields);
    return { object: 'list', query: body.query, mode: body.mode ?? 'hybrid', ...results };
  });

  app.get<{ Params: NameParams; Querystring: unknown }>('/spaces/:name/documents', async (request) => {
    const query = parseWithSchema(pageQuerySchema, request.query);
    const page = await library.listDocuments(request.params.name, {
      ...(query.limit === undefined ? {} : { limit: query.limit }),
      ...(query.after === undefined ? {} : { after: query.after }),
    });
    return { object: 'list', data: page.documents, next: page.next };
  });

  app.get<{ Params: DocumentParams; Querystring: unknown }>('/spaces/:name/documents/:id', async (request) => {
    const query = parseWithSchema(getDocumentQuerySchema, request.query);
    return library.getDocument(request.params.name, request.params.id, { includeText: query.include === 'text' });
  });

  // A document's chunks, paged like its space's documents: a 32 MiB file is ~39,000 chunks.
  app.get<{ Params: DocumentParams; Querystring: unknown }>('/spaces/:name/documents/:id/chunks', async (request) => {
    const query = parseWithSchema(pageQuerySchema, request.query);
    const page = await library.listChunks(request.params.name, request.params.id, {
      ...(query.limit === undefined ? {} : { limit: query.limit }),
      ...(query.after === undefined ? {} : { after: query.after }),
    });
    return { object: 'list', data: page.chunks, next: page.next };
  });

  app.delete<{ Params: DocumentParams }>('/spaces/:name/documents/:id', async (request) => {
    await library.deleteDocument(request.params.name, request.params.id);
    return { object: 'space.document.deleted', id: request.params.id, deleted: true };
  });

  // Adds documents: a JSON `{text, …}` at once (201 new, 200 the same text was already there),
  // or multipart files as an ingest job (202).
  app.post<{ Params: NameParams; Querystring: unknown }>('/spaces/:name/documents', { bodyLimit: options.maxJsonBytes }, async (request, reply) => {
    const spaceName = (await library.getSpace(request.params.name)).name;
    if (request.isMultipart()) {
      const query = parseWithSchema(uploadQuerySchema, request.query);
      const upload = await readMultipart(request, options);
      // Every file is extracted and chunked now, so a bad one (wrong type, corrupt, empty, a zip
      // bomb) is this request's 4xx and nothing is queued; the job does the long part: embedding
      // and storing.
      const inputs: DocumentInput[] = [];
      for (const [i, file] of upload.files.entries()) {
        const fields = upload.files.length === 1 ? upload.fields : { ...upload.fields, title: null };
        inputs.push(await naming(file, i, upload.files.length, () => fileToDocument(file, fields, options.maxFileBytes)));
      }
      const logFailure = (error: unknown, index: number | null) => {
        if (!(error instanceof ApiError) || error.status >= 500) request.log.error({ err: error, file: index === null ? null : upload.files[index]?.filename }, 'ingest failed');
      };
      const job = jobs.submit(spaceName, upload.files.map((f, i) => ({ filename: f.filename ?? null, textBytes: Buffer.byteLength(inputs[i]!.text) })), async (report) => {
        try {
          await library.addDocuments(spaceName, inputs, (index, result) => {
            if (result.ok) {
              report(index, { documentId: result.document.id, status: result.created ? 'added' : 'unchanged' });
            } else {
              logFailure(result.error, index);
              report(index, { error: result.error });
            }
          });
        } catch (error) {
          logFailure(error, null);
          throw error;
        }
      });
      if (query.wait === 'true') return reply.code(200).send(await jobs.wait(job.id));
      return reply.code(202).header('location', `/api/spaces/${encodeURIComponent(spaceName)}/jobs/${job.id}`).send(job);
    }
    const body = parseWithSchema(addTextDocumentSchema, request.body);
    const input = await textToDocument(body.text, body.format ?? 'text', fieldsOf(body));
    const { document, created } = await library.addDocument(spaceName, input);
    return reply.code(created ? 201 : 200).send(document);
  });

  // Replaces a document's text (JSON `{text, …}` or one file): its old chunks go in the same transaction.
  app.put<{ Params: DocumentParams }>('/spaces/:name/documents/:id', { bodyLimit: options.maxJsonBytes }, async (request) => {
    const { name, id } = request.params;
    let input: DocumentInput;
    if (request.isMultipart()) {
      const upload = await readMultipart(request, { ...options, maxFiles: 1 });
      if (upload.files.length !== 1) throw ApiError.invalidRequest('Send exactly one file to replace a document.', 'file', 'invalid_upload');
      input = await fileToDocument(upload.files[0]!, upload.fields, options.maxFileBytes);
    } else {
      const body = parseWithSchema(addTextDocumentSchema, request.body);
      input = await textToDocument(body.text, body.format ?? 'text', fieldsOf(body));
    }
    return library.replaceDocument(name, id, input);
  });

  app.get<{ Params: { name: string; id: string } }>('/spaces/:name/jobs/:id', async (request) => jobs.get(request.params.name, request.params.id));

  app.post<{ Params: NameParams }>('/spaces/:name/reindex', async (request) => library.reindex(request.params.name));
}

/** A file's extraction error names the file when the upload carried several. */
async function naming<T>(file: UploadedFile, index: number, count: number, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (count === 1 || !(error instanceof ApiError)) throw error;
    const name = file.filename ?? `file ${index + 1}`;
    throw new ApiError({ ...error.toOptions(), message: `${name}: ${error.message}`, param: `file[${index}]` });
  }
}

/**
 * A search that failed for a reason of ours (the embedder or the store unavailable) is a 503
 * `retrieval_unavailable` with the cause in the log: never a 500, never an empty list.
 */
async function searching<T>(request: FastifyRequest, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof ApiError && error.status < 500) throw error;
    request.log.warn({ failure_class: 'retrieval_unavailable', err: error }, 'search unavailable');
    throw ApiError.busy('Search is unavailable right now (the embedder or the spaces store failed); the daemon log says why.', 5, 503, 'retrieval_unavailable');
  }
}

/**
 * Reads a whole multipart request: files into memory (each bounded by maxFileBytes), the fields
 * `title`, `source` and `metadata` (JSON) beside them. Any other field is refused, as unknown
 * JSON fields are. Multipart's own errors become the envelope's codes.
 */
async function readMultipart(request: FastifyRequest, options: Pick<SpacesRoutesOptions, 'maxFileBytes' | 'maxFiles' | 'maxUploadBytes'>): Promise<MultipartUpload> {
  const files: UploadedFile[] = [];
  let total = 0;
  const fields: DocumentFields = {};
  try {
    for await (const part of request.parts()) {
      if (part.type === 'file') {
        if (files.length >= options.maxFiles) throw ApiError.tooLarge(`At most ${options.maxFiles} files per upload.`, 'file', 'too_many_files');
        const filename = part.filename === '' ? undefined : validateUploadFilename(part.filename, 'file');
        const bytes = await part.toBuffer();
        total += bytes.byteLength;
        if (total > options.maxUploadBytes) throw ApiError.tooLarge(`The files of one upload may hold at most ${options.maxUploadBytes} bytes together; send them in several uploads.`, 'file', 'upload_too_large');
        files.push({ bytes, filename, contentType: part.mimetype });
        continue;
      }
      const value = typeof part.value === 'string' ? part.value : String(part.value);
      switch (part.fieldname) {
        case 'title': fields.title = value; break;
        case 'source': fields.source = value; break;
        case 'metadata': {
          let parsed: unknown;
          try {
            parsed = JSON.parse(value);
          } catch {
            throw ApiError.invalidRequest('The metadata field must be a JSON object.', 'metadata', 'invalid_metadata');
          }
          fields.metadata = parseWithSchema(metadataSchema, parsed, { prefix: 'metadata' });
          break;
        }
        default:
          throw ApiError.invalidRequest(`Unrecognized form field: ${part.fieldname.slice(0, 100)} (send files, and optionally title, source and metadata).`, part.fieldname.slice(0, 100), 'unknown_field');
      }
    }
  } catch (error) {
    throw multipartError(error, options.maxFileBytes);
  }
  if (files.length === 0) throw ApiError.invalidRequest('The upload holds no file: send one or more files as multipart/form-data parts.', 'file', 'invalid_upload');
  return { files, fields };
}

function multipartError(error: unknown, maxFileBytes: number): unknown {
  if (error instanceof ApiError) return error;
  const code = (error as { code?: unknown } | undefined)?.code;
  switch (code) {
    case 'FST_REQ_FILE_TOO_LARGE':
      return ApiError.tooLarge(`A file is larger than this daemon accepts (${maxFileBytes} bytes).`, 'file', 'document_too_large');
    case 'FST_FILES_LIMIT':
    case 'FST_PARTS_LIMIT':
    case 'FST_FIELDS_LIMIT':
      return ApiError.tooLarge('The upload has too many parts.', null, 'too_many_files');
    case 'FST_PROTO_VIOLATION':
      return ApiError.invalidRequest('A form field name is not allowed.', null, 'unknown_field');
    case 'FST_MP_PREMATURE_CLOSE':
      return ApiError.invalidRequest('The upload ended before the multipart body was complete.', null, 'invalid_upload');
    default: {
      const message = error instanceof Error ? error.message : '';
      // busboy's parse errors ("Malformed part header", "Unexpected end of form") are the client's.
      if (/multipart|boundary|part header|end of form/i.test(message)) {
        return ApiError.invalidRequest(`The multipart body could not be read: ${message.slice(0, 200)}`, null, 'invalid_upload');
      }
      return error;
    }
  }
}
