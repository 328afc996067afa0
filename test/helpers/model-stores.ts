/**
 * Writes model stores the way the tools themselves lay them out, for discovery tests and the
 * discovery benchmark: Ollama's manifests and content-addressed blobs, the Hugging Face hub
 * cache (snapshots of symlinks into blobs, refs), and LM Studio's publisher/repo folders.
 */
import { createHash } from 'node:crypto';
import { existsSync, linkSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';

const sha256 = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');

export interface OllamaName {
  host?: string;
  namespace?: string;
  model: string;
  tag: string;
}

/**
 * Adds a model to an Ollama store (`root` holds manifests/ and blobs/). The blob is written once
 * per content; `linkFrom` hard-links an existing file instead of writing bytes (benchmarks).
 * Returns the manifest's path and the blob's.
 */
export function writeOllamaModel(root: string, name: OllamaName, gguf: Buffer, options: { linkFrom?: string; digest?: string } = {}): { manifest: string; blob: string } {
  const digest = options.digest ?? sha256(gguf);
  const blob = join(root, 'blobs', `sha256-${digest}`);
  mkdirSync(dirname(blob), { recursive: true });
  if (!existsSync(blob)) {
    if (options.linkFrom !== undefined) linkSync(options.linkFrom, blob);
    else writeFileSync(blob, gguf);
  }
  const config = Buffer.from(JSON.stringify({ model_format: 'gguf', model_family: 'llama' }));
  const manifest = {
    schemaVersion: 2,
    mediaType: 'application/vnd.docker.distribution.manifest.v2+json',
    config: { mediaType: 'application/vnd.docker.container.image.v1+json', digest: `sha256:${sha256(config)}`, size: config.length },
    layers: [
      { mediaType: 'application/vnd.ollama.image.model', digest: `sha256:${digest}`, size: gguf.length },
      { mediaType: 'application/vnd.ollama.image.template', digest: `sha256:${'1'.repeat(64)}`, size: 100 },
      { mediaType: 'application/vnd.ollama.image.params', digest: `sha256:${'2'.repeat(64)}`, size: 30 },
    ],
  };
  const path = join(root, 'manifests', name.host ?? 'registry.ollama.ai', name.namespace ?? 'library', name.model, name.tag);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, JSON.stringify(manifest));
  return { manifest: path, blob };
}

/**
 * Adds a file to a hub cache (`hub` = the `.../huggingface/hub` directory) at a revision, as
 * huggingface_hub does: the bytes in `blobs/<sha256>`, a relative symlink in the snapshot, and
 * `refs/main` pointing at the revision when `main` is set. Returns the snapshot path.
 */
export function writeHubFile(hub: string, repo: string, revision: string, fileInRepo: string, gguf: Buffer, options: { main?: boolean; linkFrom?: string } = {}): string {
  const repoDir = join(hub, `models--${repo.replace('/', '--')}`);
  const blob = join(repoDir, 'blobs', sha256(gguf));
  mkdirSync(dirname(blob), { recursive: true });
  if (!existsSync(blob)) {
    if (options.linkFrom !== undefined) linkSync(options.linkFrom, blob);
    else writeFileSync(blob, gguf);
  }
  const snapshotFile = join(repoDir, 'snapshots', revision, fileInRepo);
  mkdirSync(dirname(snapshotFile), { recursive: true });
  symlinkSync(relative(dirname(snapshotFile), blob), snapshotFile);
  if (options.main === true) {
    mkdirSync(join(repoDir, 'refs'), { recursive: true });
    writeFileSync(join(repoDir, 'refs', 'main'), revision);
  }
  return snapshotFile;
}

/** Writes (or hard-links) a file under a folder, creating its parents; returns its path. */
export function writeModelFile(path: string, gguf: Buffer, options: { linkFrom?: string } = {}): string {
  mkdirSync(dirname(path), { recursive: true });
  if (options.linkFrom !== undefined) linkSync(options.linkFrom, path);
  else writeFileSync(path, gguf);
  return path;
}
