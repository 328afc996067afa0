/**
 * Ollama's model store: `manifests/<host>/<namespace>/<model>/<tag>` are OCI-style JSON
 * manifests whose layers point at content-addressed blobs; the layer with media type
 * `application/vnd.ollama.image.model` is the GGUF, stored as `blobs/sha256-<hex>`.
 */
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { readDirectory } from './gguf-file-walk.ts';
import type { ModelCandidate, ScanResult } from './model-candidate.ts';
import { ollamaModelId } from './model-ids.ts';

const MODEL_LAYER = 'application/vnd.ollama.image.model';
/** Real manifests are a few KB; a larger file is not one. */
const MAX_MANIFEST_BYTES = 1 << 20;

const manifestSchema = z.object({
  layers: z.array(z.object({ mediaType: z.string(), digest: z.string() })),
});

/** The directories below `dir`, or a warning. */
async function subdirectories(dir: string, warnings: string[]): Promise<string[]> {
  const listing = await readDirectory(dir);
  if ('missing' in listing) return [];
  if ('warning' in listing) {
    warnings.push(`ollama: ${listing.warning}`);
    return [];
  }
  return listing.entries.filter((e) => !e.name.startsWith('.') && e.isDirectory()).map((e) => e.name);
}

async function readManifest(path: string, host: string, namespace: string, model: string, tag: string, root: string): Promise<ModelCandidate | string | undefined> {
  const id = ollamaModelId(host, namespace, model, tag);
  const broken = (why: string) => `ollama: ${id}: manifest ${path} ${why}; skipped`;
  let info;
  let text;
  try {
    info = await stat(path);
    if (!info.isFile()) return undefined;
    if (info.size > MAX_MANIFEST_BYTES) return broken(`is ${info.size} bytes, too large for a manifest`);
    text = await readFile(path, 'utf8');
  } catch (error) {
    return broken(`cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return broken('is not valid JSON');
  }
  const manifest = manifestSchema.safeParse(json);
  if (!manifest.success) return broken('has no list of layers');
  const layer = manifest.data.layers.find((l) => l.mediaType === MODEL_LAYER);
  // Ollama's cloud models and other non-local entries have no weights here: nothing to serve.
  if (layer === undefined) return undefined;
  const digest = /^sha256:([0-9a-f]{64})$/.exec(layer.digest);
  if (digest === null) return broken(`names a malformed model digest ${JSON.stringify(layer.digest.slice(0, 80))}`);
  const blob = join(root, 'blobs', `sha256-${digest[1]}`);
  return { id, path: blob, parts: [blob], modifiedMs: info.mtimeMs };
}

/** Lists the models of one Ollama store (`root` = the directory holding `manifests/` and `blobs/`). */
export async function scanOllamaStore(root: string): Promise<ScanResult> {
  const warnings: string[] = [];
  const manifests = join(root, 'manifests');
  const jobs: Promise<ModelCandidate | string | undefined>[] = [];
  for (const host of await subdirectories(manifests, warnings)) {
    for (const namespace of await subdirectories(join(manifests, host), warnings)) {
      const models = await subdirectories(join(manifests, host, namespace), warnings);
      const tagLists = await Promise.all(models.map(async (model) => {
        const dir = join(manifests, host, namespace, model);
        const listing = await readDirectory(dir);
        if ('missing' in listing) return [];
        if ('warning' in listing) {
          warnings.push(`ollama: ${listing.warning}`);
          return [];
        }
        return listing.entries.filter((e) => !e.name.startsWith('.') && !e.isDirectory()).map((e) => ({ model, tag: e.name }));
      }));
      for (const { model, tag } of tagLists.flat()) {
        jobs.push(readManifest(join(manifests, host, namespace, model, tag), host, namespace, model, tag, root));
      }
    }
  }
  const candidates: ModelCandidate[] = [];
  for (const result of await Promise.all(jobs)) {
    if (typeof result === 'string') warnings.push(result);
    else if (result !== undefined) candidates.push(result);
  }
  return { candidates, warnings };
}
