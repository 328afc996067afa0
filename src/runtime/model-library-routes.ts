import type { FastifyInstance, FastifyReply } from 'fastify';
import { z } from 'zod';
import type { ModelRegistry } from '../inference/language-model.ts';
import { abortOnDisconnect } from '../http/abort-on-disconnect.ts';
import { LazySseStream } from '../http/sse-stream.ts';
import { pullModel, type PullEvent, type PullResult } from '../models/model-pull.ts';
import { parseModelReference } from '../models/model-reference.ts';
import { ownerHint, removeSvcModel } from '../models/model-removal.ts';
import { PullError, type PullErrorCode } from '../models/pull-error.ts';
import { RemovalRefusedError } from '../models/removal-refused-error.ts';
import type { LocalModel } from '../models/model-discovery.ts';
import { MAX_MODEL_ID_LENGTH, modelNotFound } from '../openai/model-lookup.ts';
import { ApiError } from '../shared/api-error.ts';
import { linkedAbort } from '../shared/linked-abort.ts';
import { parseWithSchema } from '../shared/parse-with-schema.ts';
import { quoteInput } from '../shared/quote-input.ts';
import { toOpenAIModel } from './models-routes.ts';

/** What the pull and delete routes need of the engine (src/inference/llama-engine.ts). */
export interface ModelFiles {
  /** The engine's model with this id: which store it came from and where its file is. */
  localModel(id: string): Pick<LocalModel, 'id' | 'source' | 'path'> | undefined;
  /** In memory, loading, or serving requests: such a model is not deleted. */
  inUse(id: string): boolean;
  /** Discovers again, so /v1/models lists a pulled model and forgets a deleted one. */
  refreshModels(): Promise<void>;
}

export interface ModelLibraryOptions {
  models: ModelRegistry;
  files: ModelFiles;
  /** Pulls land in `<dataDir>/models`, as with `svc models pull`. */
  dataDir: string;
  /** HF_ENDPOINT and HF_TOKEN, as the CLI reads them. */
  hubEndpoint?: string | undefined;
  token?: string | undefined;
  loadedModels?: (() => readonly string[]) | undefined;
  memoryBytes?: ((id: string) => number | null) | undefined;
  /** A pull in progress stops when the daemon shuts down (the partial file stays for a resume). */
  shutdownSignal: AbortSignal;
}

export const pullBodySchema = z.strictObject({
  model: z.string().min(1).max(MAX_MODEL_ID_LENGTH),
  force: z.boolean().optional(),
  stream: z.boolean().optional(),
});

/** `{"model": reference}` is small: anything much larger is refused as it arrives. */
const PULL_BODY_LIMIT = 64 * 1024;
/** Progress events for one file at most this often (a 5 GB model would otherwise send ~80 000). */
const PROGRESS_EVERY_MS = 200;

/** HTTP status per pull failure: the reference's fault is 4xx; the hub's or the disk's is said as such. */
const PULL_STATUS: Record<PullErrorCode, { status: number; type: string }> = {
  invalid_reference: { status: 400, type: 'invalid_request_error' },
  ambiguous: { status: 400, type: 'invalid_request_error' },
  no_match: { status: 404, type: 'invalid_request_error' },
  repo_not_found: { status: 404, type: 'invalid_request_error' },
  revision_not_found: { status: 404, type: 'invalid_request_error' },
  file_not_found: { status: 404, type: 'invalid_request_error' },
  gated: { status: 403, type: 'permission_error' },
  unauthorized: { status: 403, type: 'permission_error' },
  not_gguf: { status: 422, type: 'invalid_request_error' },
  exists: { status: 409, type: 'invalid_request_error' },
  busy: { status: 409, type: 'invalid_request_error' },
  // Only the daemon's shutdown reaches a client: one that went away reads no answer.
  aborted: { status: 503, type: 'server_error' },
  network: { status: 502, type: 'upstream_error' },
  http: { status: 502, type: 'upstream_error' },
  checksum_mismatch: { status: 502, type: 'upstream_error' },
  size_mismatch: { status: 502, type: 'upstream_error' },
  disk_full: { status: 507, type: 'server_error' },
  permission: { status: 500, type: 'server_error' },
};

function pullApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  if (error instanceof PullError) {
    const { status, type } = Object.hasOwn(PULL_STATUS, error.code) ? PULL_STATUS[error.code] : { status: 500, type: 'server_error' };
    // `--force` is the CLI's spelling; the API's is `force: true`.
    const message = error.message.replace('pass --force', 'send "force": true').replace('--sha256', 'a sha256');
    return new ApiError({ status, type, code: error.code, message, param: status < 500 ? 'model' : null, cause: error });
  }
  return ApiError.internal(error);
}

/** One progress event of the stream, in Ollama's `/api/pull` manner: a `status` and byte counts. */
function progressEvent(event: PullEvent): Record<string, unknown> | undefined {
  switch (event.type) {
    case 'resolved': {
      const sizes = event.files.map((f) => f.size);
      const total = sizes.every((s) => s !== undefined) ? sizes.reduce((n: number, s) => n + s!, 0) : null;
      return { status: 'resolved', id: event.id, source: event.source, files: event.files.length, total };
    }
    case 'file-present':
      return { status: 'present', file: event.file.name, total: event.file.size ?? null };
    case 'file-start':
      return { status: 'downloading', file: event.file.name, completed: 0, total: event.file.size ?? null };
    case 'download': {
      const p = event.progress;
      if (p.phase === 'downloading') return { status: 'downloading', file: event.file.name, completed: p.bytes, total: p.total ?? null };
      if (p.phase === 'checking') return { status: 'checking', file: event.file.name, completed: p.bytes, total: p.total };
      if (p.phase === 'verifying') return { status: 'verifying', file: event.file.name, completed: p.bytes };
      if (p.phase === 'retrying') return { status: 'retrying', file: event.file.name, attempt: p.attempt, reason: p.reason };
      return { status: 'restarting', file: event.file.name, reason: p.reason };
    }
    case 'file-done':
      return { status: 'downloaded', file: event.file.name, completed: event.result.bytes, total: event.result.bytes, verified: event.result.verified };
  }
}

/**
 * `POST /v1/models/pull` and `DELETE /v1/models/{id}` (docs/models.md#the-api): what
 * `svc models pull` and `svc models rm` do, for the console and any HTTP client. A pull streams
 * its progress as Server-Sent Events once the hub has resolved the reference (so a reference
 * that names nothing is a plain 4xx); one pull per reference runs at a time (409
 * `pull_in_progress`), and a client that goes away stops it (the partial file stays, and the
 * next pull resumes it). The delete answers like OpenAI's `DELETE /v1/models/{model}`.
 */
export async function modelLibraryRoutes(app: FastifyInstance, options: ModelLibraryOptions): Promise<void> {
  const { models, files } = options;
  const hubEndpoint = options.hubEndpoint === undefined || options.hubEndpoint.trim() === '' ? undefined : options.hubEndpoint;
  /** References being pulled now (trimmed, as typed): a second pull of one is refused. */
  const pulling = new Set<string>();
  const modelObject = (id: string) => {
    const descriptor = models.list().find((m) => m.id === id);
    return descriptor === undefined ? { id, object: 'model' } : toOpenAIModel(descriptor, new Set(options.loadedModels?.() ?? []), options.memoryBytes);
  };

  app.post('/models/pull', { bodyLimit: PULL_BODY_LIMIT }, async (request, reply) => {
    const body = parseWithSchema(pullBodySchema, request.body ?? undefined);
    const key = body.model.trim();
    let ref;
    try {
      ref = parseModelReference(key, { hubEndpoint: hubEndpoint ?? 'https://huggingface.co' });
    } catch (error) {
      throw pullApiError(error);
    }
    // `owner/repo` lists files in the CLI; here it pulls the repository's Q4_K_M file, as Ollama does with hf.co/owner/repo.
    const target = ref.kind === 'hub-repo' ? { kind: 'hub-quant' as const, owner: ref.owner, repo: ref.repo, tag: undefined, revision: ref.revision } : ref;
    if (pulling.has(key)) {
      throw new ApiError({ status: 409, type: 'invalid_request_error', code: 'pull_in_progress', param: 'model', message: `${quoteInput(key)} is being pulled already; wait for that pull to end.` });
    }
    pulling.add(key);
    const disconnected = abortOnDisconnect(reply);
    const { signal, release } = linkedAbort([disconnected, options.shutdownSignal]);
    const stream = body.stream === false ? undefined : new LazySseStream(reply);
    const throttle = new Map<string, number>();
    const onEvent = (event: PullEvent) => {
      if (stream === undefined) return;
      const data = progressEvent(event);
      if (data === undefined) return;
      if (event.type === 'download' && event.progress.phase === 'downloading' && event.progress.bytes !== event.progress.total) {
        const now = performance.now();
        if (now - (throttle.get(event.file.name) ?? -Infinity) < PROGRESS_EVERY_MS) return;
        throttle.set(event.file.name, now);
      }
      if (!signal.aborted) stream.send(data);
    };
    let result: PullResult;
    try {
      result = await pullModel(target, { dataDir: options.dataDir, hubEndpoint, token: options.token, force: body.force, signal, onEvent });
      await files.refreshModels();
    } catch (error) {
      const apiError = pullApiError(error);
      if (disconnected.aborted) return reply;
      if (stream?.opened === true) {
        stream.error(apiError);
        return reply;
      }
      throw apiError;
    } finally {
      pulling.delete(key);
      release();
    }
    const answer = { status: 'success', ...modelObject(result.id), files: result.files.map((f) => ({ path: f.path, bytes: f.bytes, verified: f.verified, already_present: f.alreadyPresent })) };
    if (stream === undefined) return answer;
    stream.send(answer);
    stream.done();
    return reply;
  });

  // Ids may hold slashes and colons (`hf:owner/repo/file`): the rest of the path, percent-decoded.
  app.delete<{ Params: { '*': string } }>('/models/*', async (request, reply) => deleteModel(request.params['*'], reply));

  async function deleteModel(id: string, reply: FastifyReply) {
    const descriptor = id.length > MAX_MODEL_ID_LENGTH ? undefined : models.list().find((m) => m.id === id);
    if (descriptor === undefined) throw modelNotFound(models, id);
    const refuse = (code: string, message: string) => new ApiError({ status: 409, type: 'invalid_request_error', code, param: 'model', message });
    const local = files.localModel(id);
    if (local === undefined) {
      const why = descriptor.source === 'builtin' ? 'is built in' : `is served by the upstream ${quoteInput(descriptor.ownedBy)}`;
      throw refuse('model_not_removable', `The model ${quoteInput(id)} ${why}: there is no file of svc's to delete.`);
    }
    if (local.source !== 'svc') throw refuse('model_not_removable', `${ownerHint(local)}.`);
    if (files.inUse(id)) {
      throw refuse('model_in_use', `The model ${quoteInput(id)} is loaded or serving requests; unload it first (POST /api/models/unload), then delete it.`);
    }
    try {
      await removeSvcModel(local, options.dataDir);
    } catch (error) {
      if (error instanceof RemovalRefusedError) throw refuse('model_not_removable', error.message);
      throw error;
    } finally {
      await files.refreshModels();
    }
    return reply.send({ id, object: 'model', deleted: true });
  }
}
