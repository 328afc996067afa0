/**
 * Finds the GGUF models already on this machine, read-only and without copying: svc's own
 * folder, Ollama's store, the Hugging Face hub cache and LM Studio's folder. Only headers are
 * read (gguf-header.ts), and what they said is kept in an index cache keyed by file identity,
 * so a listing after the first reads no GGUF at all. Anything broken (a bad manifest, a dangling
 * symlink, a truncated or foreign file, an unreadable directory) costs one warning and is
 * skipped; discovery itself never fails.
 */
import type { BigIntStats } from 'node:fs';
import { lstat, realpath, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { GgufFormatError, headerBuffer, readGgufSummary, type GgufSummary } from './gguf-header.ts';
import { fileIdentity, GgufIndexCache, type IndexedHeader } from './gguf-index-cache.ts';
import { scanHuggingFaceCache } from './huggingface-cache.ts';
import { scanLmStudioFolder } from './lmstudio-folder.ts';
import type { ModelCandidate, ScanResult } from './model-candidate.ts';
import { isRunnableModel } from './model-capabilities.ts';
import { scanOllamaStore } from './ollama-store.ts';
import { scanSvcModelsFolder } from './svc-models-folder.ts';

export type { GgufSummary } from './gguf-header.ts';

/** Where a model came from: a `--model` flag, svc's folder, or another tool's store. */
export type ModelSource = 'flag' | 'svc' | 'ollama' | 'huggingface' | 'lmstudio';
/** The sources that can be switched on and off (`--discover`). */
export type DiscoverableSource = Exclude<ModelSource, 'flag' | 'svc'>;
export const DISCOVERABLE_SOURCES: readonly DiscoverableSource[] = ['ollama', 'huggingface', 'lmstudio'];

export interface LocalModel {
  id: string;
  /** The file llama.cpp opens (the first part of a split model). */
  path: string;
  source: ModelSource;
  /** On disk, all parts of a split model together. */
  sizeBytes: number;
  /** The file's modification time; for Ollama the manifest's (when the tag was pulled). */
  modifiedMs: number;
  /** The header's metadata; for a split model `parameterCount` counts every part. */
  gguf: GgufSummary;
}

export interface DiscoveryOptions {
  /** svc's data directory: models in `<dataDir>/models`, the index cache in `<dataDir>/cache`. */
  dataDir: string;
  sources: ReadonlySet<DiscoverableSource>;
  /** Where OLLAMA_MODELS, HF_HUB_CACHE, HF_HOME, XDG_CACHE_HOME are read (default process.env). */
  env?: NodeJS.ProcessEnv;
  /** Home directory for the default locations (default os.homedir()). */
  homeDir?: string;
  /**
   * The store of Ollama's Linux service, searched when OLLAMA_MODELS is unset
   * (default `/usr/share/ollama/.ollama/models`; null: none, for tests).
   */
  systemOllamaDir?: string | null;
  /** Keep the header index in `<dataDir>/cache/gguf-index.json` (default true). */
  indexCache?: boolean;
}

export interface DiscoveryResult {
  models: LocalModel[];
  warnings: string[];
  /** GGUF headers read this time (0 when the index cache knew every file). */
  headersRead: number;
}

const SYSTEM_OLLAMA_DIR = '/usr/share/ollama/.ollama/models';
/** Header reads in flight at once: enough to overlap file reads with parsing. */
const READ_CONCURRENCY = 4;
/** Order of precedence when two sources give the same id (flags come before all of these). */
const SOURCE_ORDER: readonly ModelSource[] = ['svc', 'ollama', 'huggingface', 'lmstudio'];

/**
 * `--discover` / SVC_DISCOVER: a comma list of `ollama`, `huggingface` (or `hf`), `lmstudio`;
 * `all` (the default, also for an empty value) or `none`. Throws RangeError naming a bad value.
 */
export function parseDiscoverSources(value: string | undefined): Set<DiscoverableSource> {
  const items = (value ?? '').split(',').map((v) => v.trim().toLowerCase()).filter((v) => v !== '');
  if (items.length === 0 || (items.length === 1 && items[0] === 'all')) return new Set(DISCOVERABLE_SOURCES);
  if (items.length === 1 && items[0] === 'none') return new Set();
  const sources = new Set<DiscoverableSource>();
  for (const item of items) {
    const source = item === 'hf' ? 'huggingface' : item;
    if (!(DISCOVERABLE_SOURCES as readonly string[]).includes(source)) {
      throw new RangeError(`'${item.slice(0, 40)}' is not a model source; use a comma list of ${DISCOVERABLE_SOURCES.join(', ')}, or all, or none`);
    }
    sources.add(source as DiscoverableSource);
  }
  return sources;
}

function expandHome(value: string, home: string): string {
  if (value === '~') return home;
  if (value.startsWith('~/')) return join(home, value.slice(2));
  return resolve(value);
}

/** The directories each source reads, as the tools themselves resolve them. */
export function discoveryRoots(options: Omit<DiscoveryOptions, 'sources' | 'dataDir'>): Record<DiscoverableSource, string[]> {
  const env = options.env ?? process.env;
  const home = options.homeDir ?? homedir();
  const fromEnv = (name: string): string | undefined => {
    const value = Object.hasOwn(env, name) ? env[name] : undefined;
    return value === undefined || value.trim() === '' ? undefined : expandHome(value.trim(), home);
  };
  // Ollama reads OLLAMA_MODELS or ~/.ollama/models; its Linux service runs as the `ollama` user
  // whose home is /usr/share/ollama.
  const ollamaModels = fromEnv('OLLAMA_MODELS');
  const systemOllama = options.systemOllamaDir === undefined ? SYSTEM_OLLAMA_DIR : options.systemOllamaDir;
  const ollama = ollamaModels !== undefined ? [ollamaModels] : [join(home, '.ollama', 'models'), ...(systemOllama === null ? [] : [systemOllama])];
  // huggingface_hub: HF_HUB_CACHE (formerly HUGGINGFACE_HUB_CACHE), else $HF_HOME/hub, where
  // HF_HOME defaults to $XDG_CACHE_HOME/huggingface, XDG_CACHE_HOME to ~/.cache.
  const hfHome = fromEnv('HF_HOME') ?? join(fromEnv('XDG_CACHE_HOME') ?? join(home, '.cache'), 'huggingface');
  const huggingface = [fromEnv('HF_HUB_CACHE') ?? fromEnv('HUGGINGFACE_HUB_CACHE') ?? join(hfHome, 'hub')];
  // LM Studio 0.3 keeps models in ~/.lmstudio/models; earlier versions in ~/.cache/lm-studio/models.
  const lmstudio = [join(home, '.lmstudio', 'models'), join(home, '.cache', 'lm-studio', 'models')];
  return { ollama, huggingface, lmstudio };
}

/** Roots that are the same directory (one a symlink to the other) are read once. */
async function distinctRoots(roots: string[]): Promise<string[]> {
  const seen = new Set<string>();
  const result: string[] = [];
  for (const root of roots) {
    const real = await realpath(root).catch(() => root);
    if (seen.has(real)) continue;
    seen.add(real);
    result.push(root);
  }
  return result;
}

async function scanAll(roots: string[], scan: (root: string) => Promise<ScanResult>): Promise<ScanResult> {
  const results = await Promise.all((await distinctRoots(roots)).map(scan));
  return { candidates: results.flatMap((r) => r.candidates), warnings: results.flatMap((r) => r.warnings) };
}

interface FileFacts {
  stats?: BigIntStats;
  header?: IndexedHeader;
  /** Why the file could not be used. */
  problem?: string;
}

function describe(error: unknown): string {
  if (error instanceof GgufFormatError) return error.message;
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  if (code === 'EISDIR') return 'a directory';
  return `cannot read (${code ?? (error as Error).message})`;
}

/** Stats a file and reads its header unless the index cache already has it. */
async function inspect(path: string, cache: GgufIndexCache, buffer: Buffer, counter: { reads: number }): Promise<FileFacts> {
  let stats: BigIntStats;
  try {
    stats = await stat(path, { bigint: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      const link = await lstat(path).catch(() => undefined);
      return { problem: link?.isSymbolicLink() === true ? 'dangling symlink (its target is missing)' : 'missing' };
    }
    return { problem: describe(error) };
  }
  if (!stats.isFile()) return { problem: 'not a regular file' };
  const identity = fileIdentity(stats);
  const cached = cache.get(path, identity);
  if (cached !== undefined) return { stats, header: cached };
  let header: IndexedHeader;
  counter.reads++;
  try {
    header = { ok: true, summary: await readGgufSummary(path, buffer) };
  } catch (error) {
    // Read errors that may pass (permissions, I/O) are not cached; a malformed file is.
    if (!(error instanceof GgufFormatError)) return { stats, problem: describe(error) };
    header = { ok: false, error: error.message };
  }
  cache.set(path, identity, header);
  return { stats, header };
}

/** Runs `fn` over `items`, at most `limit` at a time, each worker with its own read buffer. */
async function forEachLimited<T>(items: readonly T[], limit: number, fn: (item: T, buffer: Buffer) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    const buffer = headerBuffer();
    while (next < items.length) await fn(items[next++]!, buffer);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

/** Reads every file's facts once (two Ollama tags often share one blob). */
async function inspectFiles(paths: Iterable<string>, cache: GgufIndexCache): Promise<{ facts: Map<string, FileFacts>; reads: number }> {
  const unique = [...new Set(paths)];
  const facts = new Map<string, FileFacts>();
  const counter = { reads: 0 };
  await forEachLimited(unique, READ_CONCURRENCY, async (path, buffer) => {
    facts.set(path, await inspect(path, cache, buffer, counter));
  });
  return { facts, reads: counter.reads };
}

/**
 * Turns a candidate and its files' facts into a model, or the reason to skip it (undefined:
 * skipped without a warning, for files that are not models: LoRA adapters, vision projectors).
 */
function toLocalModel(candidate: ModelCandidate, source: ModelSource, facts: ReadonlyMap<string, FileFacts>): LocalModel | { problem: string; path: string } | undefined {
  let sizeBytes = 0;
  let parameterCount = 0;
  let first: { stats: BigIntStats; summary: GgufSummary } | undefined;
  for (const part of candidate.parts) {
    const fact = facts.get(part);
    if (fact === undefined || fact.problem !== undefined || fact.stats === undefined || fact.header === undefined) {
      return { path: part, problem: fact?.problem ?? 'not inspected' };
    }
    if (!fact.header.ok) return { path: part, problem: fact.header.error };
    sizeBytes += Number(fact.stats.size);
    parameterCount += fact.header.summary.parameterCount;
    first ??= { stats: fact.stats, summary: fact.header.summary };
  }
  if (first === undefined) return { path: candidate.path, problem: 'no files' };
  if (!isRunnableModel(first.summary)) return undefined;
  if (first.summary.architecture === null) return { path: candidate.path, problem: 'no general.architecture in its metadata, so llama.cpp cannot load it' };
  return {
    id: candidate.id,
    path: candidate.path,
    source,
    sizeBytes,
    modifiedMs: candidate.modifiedMs ?? Number(first.stats.mtimeMs),
    gguf: { ...first.summary, parameterCount },
  };
}

/**
 * Lists svc's folder and the enabled sources. Ids are unique: when two sources give the same
 * id, the one earlier in svc, ollama, huggingface, lmstudio wins and the other is a warning.
 * Models come in that source order, each source sorted by id.
 */
export async function discoverModels(options: DiscoveryOptions): Promise<DiscoveryResult> {
  const roots = discoveryRoots(options);
  const scans: [ModelSource, Promise<ScanResult>][] = [['svc', scanSvcModelsFolder(join(options.dataDir, 'models'))]];
  if (options.sources.has('ollama')) scans.push(['ollama', scanAll(roots.ollama, scanOllamaStore)]);
  if (options.sources.has('huggingface')) scans.push(['huggingface', scanAll(roots.huggingface, scanHuggingFaceCache)]);
  if (options.sources.has('lmstudio')) scans.push(['lmstudio', scanAll(roots.lmstudio, scanLmStudioFolder)]);
  const [cache, ...scanned] = await Promise.all([
    GgufIndexCache.load(options.indexCache === false ? undefined : GgufIndexCache.pathIn(options.dataDir)),
    ...scans.map(([, scan]) => scan),
  ]);
  const results = scans.map(([source], i) => ({ source, ...scanned[i]! }));
  results.sort((a, b) => SOURCE_ORDER.indexOf(a.source) - SOURCE_ORDER.indexOf(b.source));

  const warnings = [...(cache.notice === undefined ? [] : [cache.notice]), ...results.flatMap((r) => r.warnings)];
  const { facts, reads } = await inspectFiles(results.flatMap((r) => r.candidates.flatMap((c) => c.parts)), cache);

  const models = new Map<string, LocalModel>();
  const warned = new Set<string>();
  for (const { source, candidates } of results) {
    for (const candidate of [...candidates].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))) {
      const model = toLocalModel(candidate, source, facts);
      if (model === undefined) continue;
      if ('problem' in model) {
        // One warning per broken file, even when several tags point at it.
        if (!warned.has(model.path)) warnings.push(`${source}: ${candidate.id}: ${model.path}: ${model.problem}; skipped`);
        warned.add(model.path);
        continue;
      }
      const existing = models.get(model.id);
      if (existing !== undefined) {
        warnings.push(`${source}: ${model.id} (${model.path}) has the id of a ${existing.source} model (${existing.path}); serving the ${existing.source} one`);
        continue;
      }
      models.set(model.id, model);
    }
  }
  const cacheError = await cache.save();
  if (cacheError !== undefined) warnings.push(`cannot write the model index cache in ${join(options.dataDir, 'cache')} (${describe(cacheError)}); the next listing reads headers again`);
  return { models: [...models.values()], warnings, headersRead: reads };
}
