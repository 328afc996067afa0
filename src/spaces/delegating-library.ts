import type { SpaceLibrary } from './space-types.ts';

/**
 * `library` with some methods replaced: what the wrappers that watch the library (change
 * notifications, the job log) share, so each names only the methods it watches.
 */
export function delegatingLibrary(library: SpaceLibrary, overrides: Partial<SpaceLibrary>): SpaceLibrary {
  return {
    createSpace: (name, defaults) => library.createSpace(name, defaults),
    listSpaces: () => library.listSpaces(),
    getSpace: (name) => library.getSpace(name),
    updateSpace: (name, changes) => library.updateSpace(name, changes),
    deleteSpace: (name) => library.deleteSpace(name),
    addDocument: (space, input) => library.addDocument(space, input),
    addDocuments: (space, inputs, onResult) => library.addDocuments(space, inputs, onResult),
    replaceDocument: (space, documentId, input) => library.replaceDocument(space, documentId, input),
    deleteDocument: (space, documentId) => library.deleteDocument(space, documentId),
    listDocuments: (space, page) => library.listDocuments(space, page),
    getDocument: (space, documentId, options) => library.getDocument(space, documentId, options),
    listChunks: (space, documentId, page) => library.listChunks(space, documentId, page),
    search: (space, request) => library.search(space, request),
    searchAll: (request) => library.searchAll(request),
    warmUp: (space) => library.warmUp(space),
    reindex: (space, onProgress) => library.reindex(space, onProgress),
    close: () => library.close(),
    ...overrides,
  };
}
