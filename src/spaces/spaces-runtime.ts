import type { FastifyInstance } from 'fastify';
import type { ModelRegistry } from '../inference/language-model.ts';
import { isRemoteModel } from '../inference/model-plane.ts';
import { ApiError } from '../shared/api-error.ts';
import { EmbedderModelRegistry } from './embedder-model-registry.ts';
import { HashedEmbedder, hashedEmbedderVersion } from './hashed-embedder.ts';
import { IngestJobs } from './ingest-jobs.ts';
import { sharedExtractionWorker } from './extraction-worker.ts';
import { DEFAULT_MAX_DOCUMENT_BYTES } from './extract-document.ts';
import { ModelEmbedder } from './model-embedder.ts';
import { openSpaceLibrary } from './space-library.ts';
import { withChangeHook } from './library-change-hook.ts';
import { withJobLog } from './library-job-log.ts';
import { NO_JOB_LOG, type JobLog } from '../shared/job-log.ts';
import { OffThread } from '../shared/off-thread.ts';
import { OffThreadHashedEmbedder } from './off-thread-embeddings.ts';
import { spacesRoutes } from './spaces-routes.ts';
import { chooseReranker } from './space-reranker.ts';
import type { Embedder, SpaceLibrary } from './space-types.ts';

/**
 * Knowledge spaces inside the daemon: the library on the data dir, the ingest queue, the
 * `/api` routes, the built-in embedder as a model, and the retrieval part of `/health`.
 */
export interface SpacesRuntime {
  library: SpaceLibrary;
  embedder: Embedder;
  /** The built-in embedder, listed in /v1/models and served by /v1/embeddings. */
  models: ModelRegistry;
  /** Registers the spaces routes (the daemon mounts it under `/api`). */
  plugin(api: FastifyInstance): Promise<void>;
  /** Reachability of the spaces store and search, for `/health` (`retrieval`). */
  health(): Promise<Record<string, unknown>>;
  close(): Promise<void>;
}

/** One file in an upload, and one JSON document body: 32 MiB, like Open WebUI's default cap per file. */
export const SPACES_MAX_FILE_BYTES = DEFAULT_MAX_DOCUMENT_BYTES;
const SPACES_MAX_FILES = 100;
/** All files of one upload together: they are held in memory while they are extracted. */
const SPACES_MAX_UPLOAD_BYTES = 128 * 1024 * 1024;
/** Uploads waiting to be ingested, in bytes, before new ones are refused with 503. */
const SPACES_MAX_QUEUED_BYTES = 512 * 1024 * 1024;

export class SpacesEmbedderError extends Error {}

/**
 * Which embedder new spaces use: the built-in one, or `--spaces-embedder <id>`, a model the
 * daemon serves that can embed (its width read from the GGUF header, or asked once).
 */
async function chooseEmbedder(id: string | undefined, models: ModelRegistry, builtin: HashedEmbedder, embedThread: OffThread): Promise<Embedder> {
  if (id === undefined || id === builtin.id) return builtin;
  // An earlier built-in version by name: new spaces get it (and its vectors), not a model wrapper.
  const version = hashedEmbedderVersion(id);
  if (version !== undefined) return new OffThreadHashedEmbedder({ version }, embedThread);
  const model = models.model(id);
  if (model === undefined) throw new SpacesEmbedderError(`--spaces-embedder ${id}: no such model (svc models list shows the ids; the built-in one is ${builtin.id})`);
  // Every document ingested and every query searched would be sent to it: space contents stay on this machine.
  if (isRemoteModel(model)) {
    throw new SpacesEmbedderError(`--spaces-embedder ${id}: the model is served by a remote upstream, and space contents stay on this machine; pick a local embedding model or leave the option out (the built-in one is ${builtin.id})`);
  }
  const descriptor = models.list().find((m) => m.id === id);
  // As /v1/embeddings, any model llama.cpp can embed with is accepted (a decoder too), not only
  // those whose header declares pooling (model-capabilities.ts).
  let dimensions = descriptor?.embeddingLength ?? undefined;
  if (dimensions == null) dimensions = (await model.embed(['dimensions']).catch((error: unknown) => {
    throw new SpacesEmbedderError(`--spaces-embedder ${id}: the model could not embed (${(error as Error).message})`);
  })).vectors[0]?.length;
  if (dimensions === undefined || dimensions < 1) throw new SpacesEmbedderError(`--spaces-embedder ${id}: the model returned no vector`);
  return new ModelEmbedder(model, dimensions);
}

export interface SpacesRuntimeOptions {
  dataDir: string;
  embedder?: string | undefined;
  models: ModelRegistry;
  onDocumentsChanged?: (space: string) => void;
  /** Where each ingest is recorded as a job (library-job-log.ts); none, nowhere. */
  jobLog?: JobLog;
}

export async function openSpacesRuntime(options: SpacesRuntimeOptions): Promise<SpacesRuntime> {
  // Where the built-in embedder hashes the documents of a bulk ingest, beside the event loop's
  // writes (OffThreadHashedEmbedder); the thread starts on first use and leaves when idle.
  const embedThread = new OffThread({ maxPending: 8 });
  const builtin = new OffThreadHashedEmbedder({}, embedThread);
  const builtinModels = new EmbedderModelRegistry(builtin, undefined, [new HashedEmbedder({ version: 1 })]);
  const embedder = await chooseEmbedder(options.embedder, { list: () => [...options.models.list(), ...builtinModels.list()], model: (id) => options.models.model(id) ?? builtinModels.model(id) }, builtin, embedThread);
  const opened = await openSpaceLibrary({ dataDir: options.dataDir, embedder });
  const watched = options.onDocumentsChanged === undefined ? opened : withChangeHook(opened, options.onDocumentsChanged);
  const library = withJobLog(watched, options.jobLog ?? NO_JOB_LOG, embedder.id);
  const jobs = new IngestJobs({ maxQueuedBytes: SPACES_MAX_QUEUED_BYTES });
  return {
    library,
    embedder,
    models: builtinModels,
    async plugin(api) {
      await api.register(spacesRoutes, { library, jobs, maxFileBytes: SPACES_MAX_FILE_BYTES, maxFiles: SPACES_MAX_FILES, maxUploadBytes: SPACES_MAX_UPLOAD_BYTES, maxJsonBytes: SPACES_MAX_FILE_BYTES, reranker: (choice) => chooseReranker(options.models, choice) });
    },
    async health() {
      const embedderInfo = { id: embedder.id, dimensions: embedder.dimensions, source: embedder instanceof HashedEmbedder ? 'builtin' : 'model' };
      try {
        const spaces = await library.listSpaces();
        const stale = spaces.filter((s) => s.reindex_required === true).map((s) => s.name);
        return {
          // The spaces API is part of this daemon: the bridge is reachable whenever /health is.
          bridge: 'ok',
          memory_search: 'ok',
          unified_search: 'ok',
          spaces: spaces.length,
          embedder: embedderInfo,
          ...(stale.length > 0 ? { reindex_required: stale } : {}),
          modes: { launch_default: 'hybrid', available: ['hybrid', 'bm25', 'dense'] },
        };
      } catch (error) {
        const reason = error instanceof ApiError ? error.message : 'the spaces store did not answer';
        return { bridge: 'ok', memory_search: 'unavailable', unified_search: 'unavailable', embedder: embedderInfo, error: reason };
      }
    },
    async close() {
      await jobs.close();
      // An extraction still running would otherwise hold the process until its time limit.
      await sharedExtractionWorker().close();
      await library.close();
      await embedThread.close();
    },
  };
}
