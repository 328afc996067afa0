/**
 * Where a model runs: `local` (llama.cpp in this process, the built-in embedder, or an upstream
 * on this machine) or `remote` (an upstream off this machine, or one configured `kind =
 * "remote"`). The privacy rule keys on it: local-context data (vault contents, files, tool
 * results) never goes to a remote model.
 */
export type ModelPlane = 'local' | 'remote';

/**
 * True for a model served by a remote upstream. Takes a `LanguageModel` or a `ModelDescriptor`
 * (both carry `plane`; a model without one is local). An upstream's kind defaults from its
 * host (loopback is local, anything else remote) and may be set with `kind` in its table.
 */
export function isRemoteModel(model: { readonly plane?: ModelPlane | undefined }): boolean {
  return model.plane === 'remote';
}
