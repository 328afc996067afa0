import { stat } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { downloadFile, type DownloadProgress, type DownloadResult } from './download-file.ts';
import { HuggingFaceHub, type HubFile, type HubTarget } from './hugging-face-hub.ts';
import { huggingFaceModelId, modelIdFromFileName, splitPartOf } from './model-ids.ts';
import { isSafeRepoPath, type ModelReference } from './model-reference.ts';
import { isInside } from './path-inside.ts';
import { PullError } from './pull-error.ts';

/**
 * `svc models pull` as a library (no console in it): resolves a reference against the hub,
 * downloads into `<data-dir>/models` and reports through `onEvent`, so the CLI, and later the
 * daemon or console, draw their own progress.
 *
 * Placement: hub files go to `<data-dir>/models/hf/<owner>/<repo>/<path in repo>` with the id
 * `hf:owner/repo/<path without .gguf>` (the id the Hugging Face cache discovery gives the same
 * file); URL downloads go to `<data-dir>/models/<file name>` with the file's base name as id.
 * Both ids come from model-ids.ts, which discovery uses for the files it finds there.
 */
export interface PullOptions {
  dataDir: string;
  /** HF_ENDPOINT: the hub (or a mirror) `hf:` references resolve against. */
  hubEndpoint?: string | undefined;
  /** HF_TOKEN: sent as a bearer token to the hub's origin only; never printed. */
  token?: string | undefined;
  /** Replace a model that is already on disk. */
  force?: boolean | undefined;
  /** The expected sha256 of a URL download (hub files carry their own). */
  sha256?: string | undefined;
  signal?: AbortSignal | undefined;
  onEvent?: ((event: PullEvent) => void) | undefined;
  retries?: number | undefined;
  retryDelayMs?: number | undefined;
  stallTimeoutMs?: number | undefined;
}

export interface PlannedFile {
  /** The path in the repository, or the URL's file name. */
  name: string;
  url: string;
  dest: string;
  size: number | undefined;
  sha256: string | undefined;
}

export type PullEvent =
  | { type: 'resolved'; id: string; source: string; files: PlannedFile[] }
  | { type: 'file-start'; file: PlannedFile; index: number; count: number }
  | { type: 'file-present'; file: PlannedFile }
  | { type: 'download'; file: PlannedFile; progress: DownloadProgress }
  | { type: 'file-done'; file: PlannedFile; result: DownloadResult };

export interface PulledFile {
  path: string;
  bytes: number;
  /** Undefined for a file that was already there (not re-read). */
  sha256: string | undefined;
  verified: boolean;
  resumedFrom: number;
  alreadyPresent: boolean;
}

export interface PullResult {
  /** The id to use in requests (`model`) and in `svc models info/rm`. */
  id: string;
  /** The model's (first) file. */
  path: string;
  files: PulledFile[];
}

/** A model of a hub repository: one GGUF file, or the parts of a split one (`-00001-of-00003.gguf`). */
export interface RepoModel {
  /** The first (or only) file's path in the repository. */
  path: string;
  files: HubFile[];
  size: number | undefined;
  quantization: string | undefined;
  /** What to pass to `svc models pull` for it. */
  reference: string;
}

export interface RepoListing {
  owner: string;
  repo: string;
  revision: string;
  commit: string | undefined;
  models: RepoModel[];
}

const DEFAULT_QUANT = 'Q4_K_M';
// Quantization names as llama.cpp's quantize tool and the common uploaders write them in file names.
const QUANT_IN_NAME = /(?:^|[-._/])((?:UD-)?(?:I?Q\d(?:_[A-Z0-9]+)*|[BM]?F(?:16|32)|BF16|TQ\d_\d))(?=[-._]|$)/i;

export function modelsDir(dataDir: string): string {
  return join(resolve(dataDir), 'models');
}

/** Where a hub file lands (its folders in the repository kept); throws if it would escape the models folder. */
export function hubDestination(dataDir: string, owner: string, repo: string, file: string): string {
  if (!isSafeRepoPath(file)) throw new PullError('invalid_reference', `refusing the file name '${file}' from the hub`);
  return inside(modelsDir(dataDir), join(modelsDir(dataDir), 'hf', owner, repo, ...file.split('/')));
}

function inside(root: string, path: string): string {
  if (!isInside(root, path)) throw new PullError('invalid_reference', `refusing to write outside ${root}: ${path}`);
  return path;
}

export function quantizationOf(path: string): string | undefined {
  return QUANT_IN_NAME.exec(basename(path))?.[1]?.toUpperCase();
}

function isProjector(path: string): boolean {
  return /^mmproj/i.test(basename(path));
}

/** Groups a repository's GGUF files into models (split parts together), in path order. */
export function groupModels(owner: string, repo: string, files: readonly HubFile[]): RepoModel[] {
  const models = new Map<string, HubFile[]>();
  for (const f of [...files].sort((a, b) => a.path.localeCompare(b.path))) {
    // Paths come from the server: one that could climb out of the repository folder is not a model.
    if (!f.path.toLowerCase().endsWith('.gguf') || !isSafeRepoPath(f.path)) continue;
    const split = splitPartOf(f.path);
    const key = split === undefined ? f.path : `${split.stem}\0${split.count}`;
    const group = models.get(key) ?? [];
    group.push(f);
    models.set(key, group);
  }
  return [...models.values()].map((group) => {
    const first = group[0]!;
    const size = group.every((g) => g.size !== undefined) ? group.reduce((n, g) => n + g.size!, 0) : undefined;
    return { path: first.path, files: group, size, quantization: quantizationOf(first.path), reference: `hf:${owner}/${repo}/${first.path}` };
  });
}

/** The models whose path carries `tag`: whole-token matches first (Q4_K is not Q4_K_M), else any substring. */
export function matchQuantization(models: readonly RepoModel[], tag: string): RepoModel[] {
  const t = tag.toLowerCase();
  const candidates = models.filter((m) => !isProjector(m.path));
  const escaped = t.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const token = new RegExp(`(?:^|[^a-z0-9_])${escaped}(?:$|[^a-z0-9_])`);
  const exact = candidates.filter((m) => token.test(basename(m.path).toLowerCase()));
  return exact.length > 0 ? exact : candidates.filter((m) => basename(m.path).toLowerCase().includes(t));
}

function formatCandidates(models: readonly RepoModel[]): string {
  const names = models.map((m) => basename(m.path));
  return names.length <= 8 ? names.join(', ') : `${names.slice(0, 8).join(', ')} and ${names.length - 8} more`;
}

async function resolveRevision(hub: HuggingFaceHub, owner: string, repo: string, revision: string, signal: AbortSignal | undefined): Promise<{ target: HubTarget; files: HubFile[]; commit: string | undefined }> {
  const info = await hub.repoInfo({ owner, repo, revision }, signal);
  // Pin the commit so the listing and the downloads read the same snapshot.
  const target = { owner, repo, revision: info.sha ?? revision };
  return { target, files: await hub.listFiles(target, signal), commit: info.sha };
}

/** `svc models pull owner/repo`: the repository's GGUF models with sizes; downloads nothing. */
export async function listRepoModels(
  ref: { owner: string; repo: string; revision: string | undefined },
  options: Pick<PullOptions, 'hubEndpoint' | 'token' | 'signal'>,
): Promise<RepoListing> {
  const hub = new HuggingFaceHub({ endpoint: options.hubEndpoint, token: options.token });
  const revision = ref.revision ?? 'main';
  const { files, commit } = await resolveRevision(hub, ref.owner, ref.repo, revision, options.signal);
  return { owner: ref.owner, repo: ref.repo, revision, commit, models: groupModels(ref.owner, ref.repo, files) };
}

async function existingSize(path: string): Promise<number | undefined> {
  try {
    const info = await stat(path);
    return info.isFile() ? info.size : -1;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

async function planHub(ref: Extract<ModelReference, { kind: 'hub-file' | 'hub-quant' }>, hub: HuggingFaceHub, options: PullOptions): Promise<{ id: string; files: PlannedFile[]; source: string }> {
  const { owner, repo } = ref;
  const { target, files } = await resolveRevision(hub, owner, repo, ref.revision ?? 'main', options.signal);
  const models = groupModels(owner, repo, files);
  let model: RepoModel;
  if (ref.kind === 'hub-file') {
    const wanted = ref.file.toLowerCase();
    const found = models.find((m) => m.files.some((f) => f.path.toLowerCase() === wanted));
    if (found === undefined) {
      const hint = models.length === 0 ? 'it has no GGUF files' : `its GGUF files: ${formatCandidates(models)}`;
      throw new PullError('file_not_found', `${ref.file} not found in ${owner}/${repo}; ${hint}`);
    }
    model = found;
  } else {
    const usable = models.filter((m) => !isProjector(m.path));
    if (usable.length === 0) throw new PullError('no_match', `${owner}/${repo} has no GGUF model files`);
    const tag = ref.tag ?? DEFAULT_QUANT;
    let matches = matchQuantization(models, tag);
    if (ref.tag === undefined && matches.length === 0 && usable.length === 1) matches = usable;
    if (matches.length !== 1) {
      const how = ref.tag === undefined ? `name one with hf:${owner}/${repo}:TAG or hf:${owner}/${repo}/FILE` : 'name the file with hf:owner/repo/FILE';
      const listed = matches.length === 0 ? usable : matches;
      const what = matches.length === 0 ? `no GGUF in ${owner}/${repo} matches '${tag}'` : `'${tag}' matches ${matches.length} GGUF files in ${owner}/${repo}`;
      throw new PullError(matches.length === 0 ? 'no_match' : 'ambiguous', `${what}: ${formatCandidates(listed)}; ${how}`);
    }
    model = matches[0]!;
  }
  const planned = model.files.map((f): PlannedFile => ({
    name: f.path,
    url: hub.fileUrl({ ...target, file: f.path }).href,
    dest: hubDestination(options.dataDir, owner, repo, f.path),
    size: f.size,
    sha256: f.sha256,
  }));
  return { id: huggingFaceModelId(owner, repo, model.path), files: planned, source: `${hub.repoUrl(owner, repo)} (${target.revision})` };
}

function planUrl(ref: Extract<ModelReference, { kind: 'url' }>, options: PullOptions): { id: string; files: PlannedFile[]; source: string } {
  const root = modelsDir(options.dataDir);
  const sha = options.sha256?.trim().toLowerCase();
  if (sha !== undefined && !/^[0-9a-f]{64}$/.test(sha)) throw new PullError('invalid_reference', '--sha256 takes 64 hex digits');
  const dest = inside(root, join(root, ref.fileName));
  return { id: modelIdFromFileName(ref.fileName), files: [{ name: ref.fileName, url: ref.url.href, dest, size: undefined, sha256: sha }], source: ref.url.origin };
}

/** Downloads the model a reference names (every part of a split model) and returns its id. */
export async function pullModel(ref: Exclude<ModelReference, { kind: 'hub-repo' }>, options: PullOptions): Promise<PullResult> {
  // A plain URL needs no hub (nor a valid HF_ENDPOINT), and gets no token.
  const hub = ref.kind === 'url' ? undefined : new HuggingFaceHub({ endpoint: options.hubEndpoint, token: options.token });
  const plan = ref.kind === 'url' ? planUrl(ref, options) : await planHub(ref, hub!, options);
  const describeHttpError = ref.kind === 'url' || hub === undefined
    ? undefined
    : (response: Response, file: PlannedFile) => hub.httpError(response, { owner: ref.owner, repo: ref.repo, revision: ref.revision ?? 'main', file: file.name });
  const emit = options.onEvent ?? (() => {});
  emit({ type: 'resolved', id: plan.id, source: plan.source, files: plan.files });
  const pulled: PulledFile[] = [];
  for (const [index, file] of plan.files.entries()) {
    const present = await existingSize(file.dest);
    if (present !== undefined && options.force !== true) {
      if (present < 0) throw new PullError('exists', `${file.dest} exists and is not a file`);
      if (file.size !== undefined && present !== file.size) {
        throw new PullError('exists', `${file.dest} exists with a different size (${present} bytes, the source has ${file.size}); pass --force to replace it`);
      }
      emit({ type: 'file-present', file });
      pulled.push({ path: file.dest, bytes: present, sha256: undefined, verified: false, resumedFrom: 0, alreadyPresent: true });
      continue;
    }
    emit({ type: 'file-start', file, index, count: plan.files.length });
    const url = new URL(file.url);
    const result = await downloadFile({
      url,
      dest: file.dest,
      expectedSize: file.size,
      expectedSha256: file.sha256,
      trustLinkedEtag: true,
      headersFor: hub?.headersFor,
      describeHttpError: describeHttpError === undefined ? undefined : (response) => describeHttpError(response, file),
      signal: options.signal,
      onProgress: (progress) => emit({ type: 'download', file, progress }),
      retries: options.retries,
      retryDelayMs: options.retryDelayMs,
      stallTimeoutMs: options.stallTimeoutMs,
    });
    emit({ type: 'file-done', file, result });
    pulled.push({ path: result.path, bytes: result.bytes, sha256: result.sha256, verified: result.verified, resumedFrom: result.resumedFrom, alreadyPresent: false });
  }
  return { id: plan.id, path: plan.files[0]!.dest, files: pulled };
}
