/**
 * The Hugging Face hub cache (huggingface_hub's layout): `models--<owner>--<repo>/` holds
 * `blobs/` (content by hash), `refs/<ref>` (a file holding the commit the ref pointed at when
 * last downloaded) and `snapshots/<commit>/<path in repo>`, whose files are symlinks into
 * `blobs/`. A file downloaded at an older commit stays only in that commit's snapshot, so every
 * snapshot is searched: the one `refs/main` names first, then the newest; each path in the repo
 * is listed once, from the first snapshot that has it.
 */
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { findGgufFiles, readDirectory } from './gguf-file-walk.ts';
import type { ModelCandidate, ScanResult } from './model-candidate.ts';
import { huggingFaceModelId } from './model-ids.ts';

/** GGUF files in repositories sit at most a few folders deep (`Q4_K_M/part-00001-of-00002.gguf`). */
const MAX_DEPTH_IN_REPO = 4;

/** `models--owner--repo` → [owner, repo]; repository names cannot contain `--`. */
function repoOf(dirName: string): [string, string] | undefined {
  const parts = dirName.slice('models--'.length).split('--');
  if (parts.length === 2 && parts[0] !== '' && parts[1] !== '') return [parts[0]!, parts[1]!];
  // An un-namespaced repository (`models--gpt2`): the hub treats it as its own owner.
  if (parts.length === 1 && parts[0] !== '') return [parts[0]!, parts[0]!];
  return undefined;
}

async function scanRepo(repoDir: string, owner: string, repo: string): Promise<ScanResult> {
  const warnings: string[] = [];
  const snapshotsDir = join(repoDir, 'snapshots');
  const listing = await readDirectory(snapshotsDir);
  if ('missing' in listing) return { candidates: [], warnings };
  if ('warning' in listing) return { candidates: [], warnings: [`huggingface: ${listing.warning}`] };
  const snapshots = listing.entries.filter((e) => e.isDirectory() && !e.name.startsWith('.')).map((e) => e.name);
  if (snapshots.length === 0) return { candidates: [], warnings };
  const main = (await readFile(join(repoDir, 'refs', 'main'), 'utf8').catch(() => '')).trim();
  if (snapshots.length > 1) {
    const mtimes = new Map(await Promise.all(snapshots.map(async (s) => [s, (await stat(join(snapshotsDir, s)).catch(() => undefined))?.mtimeMs ?? 0] as const)));
    snapshots.sort((a, b) => (a === main ? -1 : b === main ? 1 : mtimes.get(b)! - mtimes.get(a)!));
  }
  const seen = new Set<string>();
  const candidates: ModelCandidate[] = [];
  for (const snapshot of snapshots) {
    const found = await findGgufFiles(join(snapshotsDir, snapshot), MAX_DEPTH_IN_REPO);
    warnings.push(...found.warnings.map((w) => `huggingface: ${w}`));
    for (const file of found.files) {
      if (seen.has(file.relativePath)) continue;
      seen.add(file.relativePath);
      candidates.push({ id: huggingFaceModelId(owner, repo, file.relativePath), path: file.path, parts: file.parts });
    }
  }
  return { candidates, warnings };
}

/** Lists the GGUF files of one hub cache directory (`.../huggingface/hub`). */
export async function scanHuggingFaceCache(root: string): Promise<ScanResult> {
  const listing = await readDirectory(root);
  if ('missing' in listing) return { candidates: [], warnings: [] };
  if ('warning' in listing) return { candidates: [], warnings: [`huggingface: ${listing.warning}`] };
  const repos = listing.entries.flatMap((e) => {
    if (!e.name.startsWith('models--') || !(e.isDirectory() || e.isSymbolicLink())) return [];
    const repo = repoOf(e.name);
    return repo === undefined ? [] : [{ dir: join(root, e.name), repo }];
  });
  const results = await Promise.all(repos.map(({ dir, repo }) => scanRepo(dir, repo[0], repo[1])));
  return {
    candidates: results.flatMap((r) => r.candidates),
    warnings: results.flatMap((r) => r.warnings),
  };
}
