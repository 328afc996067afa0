import { delegatingLibrary } from './delegating-library.ts';
import type { SpaceLibrary } from './space-types.ts';

/**
 * The library, telling `onChanged` after each change to the set of documents (added, replaced,
 * deleted, or gone with their space), whoever made it: a route, an ingest job, chat. The MCP
 * server turns it into `notifications/resources/list_changed`.
 */
export function withChangeHook(library: SpaceLibrary, onChanged: (space: string) => void): SpaceLibrary {
  return delegatingLibrary(library, {
    async deleteSpace(name) {
      await library.deleteSpace(name);
      onChanged(name);
    },
    async addDocument(space, input) {
      const added = await library.addDocument(space, input);
      if (added.created) onChanged(space);
      return added;
    },
    async addDocuments(space, inputs, onResult) {
      const results = await library.addDocuments(space, inputs, onResult);
      if (results.some((result) => result.ok && result.created)) onChanged(space);
      return results;
    },
    async replaceDocument(space, documentId, input) {
      const replaced = await library.replaceDocument(space, documentId, input);
      onChanged(space);
      return replaced;
    },
    async deleteDocument(space, documentId) {
      await library.deleteDocument(space, documentId);
      onChanged(space);
    },
  });
}
