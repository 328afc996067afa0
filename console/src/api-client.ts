/**
 * The console's only way to the daemon: its public HTTP API, same origin, as any client would
 * call it (so the console doubles as an example client). Errors arrive in the OpenAI envelope
 * `{error: {message, type, param, code}}`; they are thrown as ApiCallError with that message.
 */
import { createParser } from 'eventsource-parser';
import type { SpaceRecord } from '../../src/spaces/space-types.ts';
import { reportReachable, reportUnreachable } from './connection-state.ts';
import { authorizationHeader, isDeveloperKeyRefusal, KEY_REQUIRED_EVENT, type KeyRequiredDetail } from './developer-key.ts';

export class ApiCallError extends Error {
  readonly status: number;
  readonly code: string | null;
  constructor(status: number, message: string, code: string | null) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

/** The words every page shows when a call could not reach the daemon (not the browser's bare "Failed to fetch"). */
export const UNREACHABLE_MESSAGE = 'The daemon is not answering: it may have stopped, or this page lost its connection to it.';

/**
 * fetch() to the daemon, telling connection-state.ts whether it answered. A network failure
 * (fetch rejects with a TypeError) becomes an ApiCallError with status 0, code
 * `daemon_unreachable` and plain words; a caller's abort stays an AbortError.
 */
async function callDaemon(url: string, init: RequestInit): Promise<Response> {
  let response: Response;
  try {
    response = await fetch(url, init);
  } catch (error) {
    if (error instanceof TypeError) {
      reportUnreachable();
      throw new ApiCallError(0, UNREACHABLE_MESSAGE, 'daemon_unreachable');
    }
    throw error;
  }
  reportReachable();
  return response;
}

/** Where the daemon is: the page's own origin and prefix (the console is served at `/`). */
export function apiUrl(path: string): string {
  return new URL(path.replace(/^\//, ''), document.baseURI).toString();
}

async function failure(response: Response): Promise<ApiCallError> {
  let message = `${response.status} ${response.statusText}`;
  let code: string | null = null;
  try {
    const body = (await response.json()) as { error?: { message?: unknown; code?: unknown } };
    if (typeof body.error?.message === 'string') message = body.error.message;
    if (typeof body.error?.code === 'string') code = body.error.code;
  } catch {
    // Not the envelope (a proxy's page, say): the status line is all there is.
  }
  // The page as a whole asks for a key (app-shell.tsx); the caller still sees its error.
  if (isDeveloperKeyRefusal(response.status, code)) {
    dispatchEvent(new CustomEvent<KeyRequiredDetail>(KEY_REQUIRED_EVENT, { detail: { code: code!, message } }));
  }
  return new ApiCallError(response.status, message, code);
}

export async function getJson<T>(path: string, signal?: AbortSignal): Promise<T> {
  const response = await callDaemon(apiUrl(path), { headers: { accept: 'application/json', ...authorizationHeader() }, signal: signal ?? null });
  if (!response.ok) throw await failure(response);
  return (await response.json()) as T;
}

export async function postJson<T>(path: string, body: unknown, signal?: AbortSignal): Promise<T> {
  const response = await callDaemon(apiUrl(path), {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json', ...authorizationHeader() },
    body: JSON.stringify(body),
    signal: signal ?? null,
  });
  if (!response.ok) throw await failure(response);
  return (await response.json()) as T;
}

/** DELETEs a resource; resolves with the API's answer (`{…, deleted: true}`). */
export async function deleteJson<T>(path: string, signal?: AbortSignal): Promise<T> {
  const response = await callDaemon(apiUrl(path), { method: 'DELETE', headers: { accept: 'application/json', ...authorizationHeader() }, signal: signal ?? null });
  if (!response.ok) throw await failure(response);
  return (await response.json()) as T;
}

/**
 * POSTs a streaming request and calls `onData` with each SSE `data:` payload parsed as JSON,
 * until `[DONE]` or the end of the body. eventsource-parser does the SSE framing (events split
 * across reads, CRLF, comments), so this file only deals in JSON.
 */
export async function postStream(path: string, body: unknown, onData: (data: unknown) => void, signal?: AbortSignal): Promise<void> {
  const response = await callDaemon(apiUrl(path), {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...authorizationHeader() },
    body: JSON.stringify(body),
    signal: signal ?? null,
  });
  if (!response.ok || response.body === null) throw await failure(response);
  let done = false;
  let streamError: ApiCallError | undefined;
  const parser = createParser({
    onEvent: (event) => {
      if (done) return;
      if (event.data === '[DONE]') {
        done = true;
        return;
      }
      const data = JSON.parse(event.data) as { error?: { message?: string; code?: string } };
      // An error after the stream began arrives as one more event in the envelope.
      if (data.error !== undefined) {
        streamError = new ApiCallError(response.status, data.error.message ?? 'The stream failed.', data.error.code ?? null);
        done = true;
        return;
      }
      onData(data);
    },
  });
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  // Read to the end even after `[DONE]` (the daemon closes right after it): cancelling the body
  // early would abort the request, which the browser reports as a failed load.
  for (;;) {
    let chunk: ReadableStreamReadResult<string>;
    try {
      chunk = await reader.read();
    } catch (error) {
      // The connection broke mid-reply (the daemon stopped): said in words, not "network error".
      if (!(error instanceof TypeError)) throw error;
      reportUnreachable();
      throw new ApiCallError(0, `The reply was cut off. ${UNREACHABLE_MESSAGE}`, 'daemon_unreachable');
    }
    if (chunk.done) break;
    parser.feed(chunk.value);
  }
  if (streamError !== undefined) throw streamError;
}

/** The subset of `/health` the console reads; every field may be absent (the contract says "may carry"). */
export interface Health {
  status: string;
  version?: string;
  substrate?: string;
  telemetry?: string;
  outbound_connections?: unknown;
  pqc_transport?: unknown;
  tls?: unknown;
  cipher?: unknown;
  cpus?: number;
  network?: { listen?: string[]; mcp?: string[]; loopback_only?: boolean };
  model?: { engine?: string; threads?: number; available?: string[]; loaded?: string[]; [key: string]: unknown };
  quantum?: { solvers?: string[]; max_qubits?: number; workers?: number; running?: number; queued?: number; [key: string]: unknown };
  upstreams?: unknown;
  retrieval?: unknown;
}

export interface ModelInfo {
  id: string;
  owned_by: string;
  source: string | null;
  size_bytes: number | null;
  arch: string | null;
  parameter_size: string | null;
  quantization: string | null;
  max_context_length: number | null;
  capabilities: string[];
  state: string;
  /** Memory a loaded model holds (weights and generation context); null when not loaded or not known. */
  memory_bytes?: number | null;
  plane: string;
}

export interface ModelList {
  data: ModelInfo[];
}

export function fetchModels(signal?: AbortSignal): Promise<ModelList> {
  return getJson<ModelList>('/v1/models', signal);
}

/** Where one model's routes are: ids hold `/` and `:` (`hf:owner/repo/file`), so the id is always encoded. */
export function modelPath(id: string): string {
  return `/v1/models/${encodeURIComponent(id)}`;
}

/** One progress event of `POST /v1/models/pull` (docs/models.md), the final one carrying the model. */
export interface PullProgressEvent {
  status: string;
  id?: string;
  file?: string;
  completed?: number;
  total?: number | null;
}

/** Models a chat request can name: those with a chat template, and upstream models (no capabilities known). */
export function chatModels(list: ModelList): ModelInfo[] {
  return list.data.filter((m) => m.capabilities.length === 0 || m.capabilities.includes('chat'));
}

/**
 * POSTs files as multipart/form-data with upload progress. fetch() reports no upload progress,
 * so this one call uses XMLHttpRequest; errors arrive in the same envelope as everywhere else.
 */
export function postFiles<T>(path: string, files: readonly File[], onProgress: (sent: number, total: number) => void): Promise<T> {
  const form = new FormData();
  for (const file of files) form.append('file', file, file.name);
  return new Promise<T>((resolve, reject) => {
    const request = new XMLHttpRequest();
    request.open('POST', apiUrl(path));
    request.setRequestHeader('accept', 'application/json');
    for (const [name, value] of Object.entries(authorizationHeader())) request.setRequestHeader(name, value);
    request.responseType = 'text';
    request.upload.onprogress = (event) => { if (event.lengthComputable) onProgress(event.loaded, event.total); };
    request.onerror = () => {
      reportUnreachable();
      reject(new ApiCallError(0, `The upload could not reach the daemon. ${UNREACHABLE_MESSAGE}`, 'daemon_unreachable'));
    };
    request.onload = () => {
      reportReachable();
      let body: unknown;
      try {
        body = JSON.parse(request.responseText);
      } catch {
        body = undefined;
      }
      if (request.status >= 200 && request.status < 300 && body !== undefined) {
        resolve(body as T);
        return;
      }
      const error = (body as { error?: { message?: unknown; code?: unknown } } | undefined)?.error;
      const message = typeof error?.message === 'string' ? error.message : `${request.status} ${request.statusText}`;
      const code = typeof error?.code === 'string' ? error.code : null;
      if (isDeveloperKeyRefusal(request.status, code)) {
        dispatchEvent(new CustomEvent<KeyRequiredDetail>(KEY_REQUIRED_EVENT, { detail: { code: code!, message } }));
      }
      reject(new ApiCallError(request.status, message, code));
    };
    request.send(form);
  });
}

/** A knowledge space as `/api/spaces` lists it: the daemon's own wire type (a type-only import, erased in the build). */
export type { SpaceRecord };

export function fetchSpaces(signal?: AbortSignal): Promise<{ data: SpaceRecord[] }> {
  return getJson<{ data: SpaceRecord[] }>('/api/spaces', signal);
}

/** Where a space's routes are: its name is the caller's text, so it is always encoded. */
export function spacePath(space: string, rest = ''): string {
  return `/api/spaces/${encodeURIComponent(space)}${rest}`;
}
