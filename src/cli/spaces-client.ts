import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { DEFAULT_MAX_DOCUMENT_BYTES } from '../spaces/extract-document.ts';
import { fileToDocument } from '../spaces/ingest-document.ts';
import type { DocumentRecord, SearchRequest, SearchResult, SpaceLibrary, SpaceRecord } from '../spaces/space-types.ts';
import { UserError } from '../shared/user-error.ts';
import { isRecord } from './daemon-client.ts';

/**
 * What `svc spaces` does, against either a running daemon (HTTP, so the daemon's index sees
 * every change) or the data dir directly when no daemon answers. Both answer the same records.
 */
export interface SpacesClient {
  readonly where: string;
  listSpaces(): Promise<SpaceRecord[]>;
  createSpace(name: string): Promise<SpaceRecord>;
  deleteSpace(name: string): Promise<void>;
  listDocuments(space: string): Promise<DocumentRecord[]>;
  deleteDocument(space: string, id: string): Promise<void>;
  /** Adds one file; `status` says whether it was new. */
  addFile(space: string, path: string, fields: { metadata?: Record<string, string> }): Promise<{ document: DocumentRecord; status: 'added' | 'unchanged' }>;
  search(space: string, request: SearchRequest): Promise<SearchResult[]>;
  close(): Promise<void>;
}


export class LibrarySpacesClient implements SpacesClient {
  readonly where: string;
  readonly #library: SpaceLibrary;

  constructor(library: SpaceLibrary, dataDir: string) {
    this.#library = library;
    this.where = dataDir;
  }

  listSpaces(): Promise<SpaceRecord[]> {
    return this.#library.listSpaces();
  }

  createSpace(name: string): Promise<SpaceRecord> {
    return this.#library.createSpace(name);
  }

  deleteSpace(name: string): Promise<void> {
    return this.#library.deleteSpace(name);
  }

  async listDocuments(space: string): Promise<DocumentRecord[]> {
    const all: DocumentRecord[] = [];
    for (let after: string | undefined; ;) {
      const page = await this.#library.listDocuments(space, { limit: 1000, ...(after === undefined ? {} : { after }) });
      all.push(...page.documents);
      if (page.next === null) return all;
      after = page.next;
    }
  }

  deleteDocument(space: string, id: string): Promise<void> {
    return this.#library.deleteDocument(space, id);
  }

  async addFile(space: string, path: string, fields: { metadata?: Record<string, string> }): Promise<{ document: DocumentRecord; status: 'added' | 'unchanged' }> {
    const bytes = await readFile(path);
    const input = await fileToDocument({ bytes, filename: basename(path) }, { source: path, metadata: fields.metadata ?? null }, DEFAULT_MAX_DOCUMENT_BYTES);
    const { document, created } = await this.#library.addDocument(space, input);
    return { document, status: created ? 'added' : 'unchanged' };
  }

  search(space: string, request: SearchRequest): Promise<SearchResult[]> {
    return this.#library.search(space, request);
  }

  close(): Promise<void> {
    return this.#library.close();
  }
}

/** An error answer of the daemon as the one line the CLI prints. */
async function failure(response: Response, what: string): Promise<UserError> {
  let message = `${response.status}`;
  try {
    const body: unknown = await response.json();
    if (isRecord(body) && isRecord(body.error) && typeof body.error.message === 'string') message = body.error.message;
  } catch {
    // not JSON: the status says enough
  }
  return new UserError(`${what}: ${message}`);
}

export class HttpSpacesClient implements SpacesClient {
  readonly where: string;
  readonly #base: string;

  constructor(base: string) {
    this.#base = base;
    this.where = base;
  }

  async #call(method: string, path: string, what: string, body?: unknown): Promise<unknown> {
    const response = await fetch(`${this.#base}/api${path}`, {
      method,
      headers: body === undefined ? { accept: 'application/json' } : { accept: 'application/json', 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    if (!response.ok) throw await failure(response, what);
    return response.json();
  }

  async listSpaces(): Promise<SpaceRecord[]> {
    const body = await this.#call('GET', '/spaces', 'listing spaces');
    return (body as { data: SpaceRecord[] }).data;
  }

  async createSpace(name: string): Promise<SpaceRecord> {
    return (await this.#call('POST', '/spaces', `creating space '${name}'`, { name })) as SpaceRecord;
  }

  async deleteSpace(name: string): Promise<void> {
    await this.#call('DELETE', `/spaces/${encodeURIComponent(name)}`, `deleting space '${name}'`);
  }

  async listDocuments(space: string): Promise<DocumentRecord[]> {
    const all: DocumentRecord[] = [];
    for (let after: string | null = null; ;) {
      const query = `?limit=1000${after === null ? '' : `&after=${encodeURIComponent(after)}`}`;
      const page = (await this.#call('GET', `/spaces/${encodeURIComponent(space)}/documents${query}`, `listing documents of '${space}'`)) as { data: DocumentRecord[]; next: string | null };
      all.push(...page.data);
      if (page.next === null) return all;
      after = page.next;
    }
  }

  async deleteDocument(space: string, id: string): Promise<void> {
    await this.#call('DELETE', `/spaces/${encodeURIComponent(space)}/documents/${encodeURIComponent(id)}`, `deleting document ${id}`);
  }

  async addFile(space: string, path: string, fields: { metadata?: Record<string, string> }): Promise<{ document: DocumentRecord; status: 'added' | 'unchanged' }> {
    const bytes = await readFile(path);
    const form = new FormData();
    form.append('source', path);
    if (fields.metadata !== undefined) form.append('metadata', JSON.stringify(fields.metadata));
    form.append('file', new Blob([bytes]), basename(path));
    const response = await fetch(`${this.#base}/api/spaces/${encodeURIComponent(space)}/documents?wait=true`, { method: 'POST', body: form });
    if (!response.ok) throw await failure(response, `adding ${path}`);
    const job = (await response.json()) as { files: { status: string; document_id: string | null; error: { message: string } | null }[] };
    const file = job.files[0];
    if (file === undefined || file.document_id === null || (file.status !== 'added' && file.status !== 'unchanged')) {
      throw new UserError(`adding ${path}: ${file?.error?.message ?? 'the daemon did not ingest it'}`);
    }
    const document = (await this.#call('GET', `/spaces/${encodeURIComponent(space)}/documents/${encodeURIComponent(file.document_id)}`, `reading document ${file.document_id}`)) as DocumentRecord;
    return { document, status: file.status };
  }

  async search(space: string, request: SearchRequest): Promise<SearchResult[]> {
    const body = await this.#call('POST', `/spaces/${encodeURIComponent(space)}/search`, `searching '${space}'`, request);
    return (body as { data: SearchResult[] }).data;
  }

  async close(): Promise<void> {}
}
