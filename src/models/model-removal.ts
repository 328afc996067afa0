import { lstat, readdir, realpath, rmdir, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { LocalModel } from './model-discovery.ts';
import { splitPartOf } from './model-ids.ts';
import { modelsDir } from './model-pull.ts';
import { partialPaths } from './partial-download.ts';
import { isInside } from './path-inside.ts';
import { RemovalRefusedError } from './removal-refused-error.ts';

/**
 * Deletes a model from svc's own folder (`<data-dir>/models`) and nothing else. Models found in
 * another tool's store belong to that tool: the refusal names the command that removes them
 * there. Every file is checked before any is deleted: its real path (symlinks resolved) must lie
 * inside the real models folder, so a link pointing elsewhere is never followed to a delete.
 */

/** Why svc leaves a model of another source alone, and what removes it there. */
export function ownerHint(model: Pick<LocalModel, 'id' | 'source' | 'path'>): string {
  switch (model.source) {
    case 'ollama':
      return `${model.id} belongs to Ollama; svc leaves it alone. Remove it with: ollama rm ${model.id}`;
    case 'huggingface':
      return `${model.id} is in the Hugging Face cache; svc leaves it alone. Remove it with: huggingface-cli delete-cache`;
    case 'lmstudio':
      return `${model.id} belongs to LM Studio; svc leaves it alone. Remove it in LM Studio's My Models (${model.path})`;
    case 'flag':
      return `${model.id} was given with --model, not placed in svc's models folder; svc leaves it alone`;
    case 'svc':
      return `${model.id} is in svc's models folder`;
  }
}

/** The files of a model: the path, or every part of a split model beside its first part. */
async function modelFiles(path: string): Promise<string[]> {
  const split = splitPartOf(basename(path));
  if (split === undefined) return [path];
  const dir = dirname(path);
  const names = await readdir(dir);
  const parts = names.filter((n) => {
    const m = splitPartOf(n);
    return m !== undefined && m.stem === split.stem && m.count === split.count;
  });
  return parts.sort().map((n) => join(dir, n));
}

/** Removes the model's files (and partial downloads beside them); returns the paths deleted. */
export async function removeSvcModel(model: Pick<LocalModel, 'id' | 'source' | 'path'>, dataDir: string): Promise<string[]> {
  if (model.source !== 'svc') throw new RemovalRefusedError(ownerHint(model));
  let root: string;
  try {
    root = await realpath(modelsDir(dataDir));
  } catch {
    throw new RemovalRefusedError(`svc's models folder ${modelsDir(dataDir)} does not exist`);
  }
  const files = await modelFiles(model.path);
  for (const file of files) {
    const info = await lstat(file);
    if (!info.isFile() && !info.isSymbolicLink()) throw new RemovalRefusedError(`refusing to delete ${file}: not a file`);
    // The entry itself (its folder resolved) and what it points to must both be inside the folder.
    const entry = join(await realpath(dirname(file)), basename(file));
    const target = await realpath(file).catch(() => entry);
    if (!isInside(root, entry)) throw new RemovalRefusedError(`refusing to delete ${file}: it is outside svc's models folder ${root}`);
    if (!isInside(root, target)) {
      throw new RemovalRefusedError(`refusing to delete ${model.id}: ${file} leads to ${target}, outside svc's models folder ${root}; remove the link yourself if that is what you mean`);
    }
  }
  const removed: string[] = [];
  for (const file of [...files, ...files.flatMap(partialPaths)]) {
    try {
      await unlink(file);
      removed.push(file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }
  // Pulled hub files sit in hf/<owner>/<repo>/…: drop the folders they leave empty (rmdir
  // refuses a folder that is not, which ends the walk up).
  for (let dir = dirname(model.path); isInside(modelsDir(dataDir), dir); dir = dirname(dir)) {
    try {
      await rmdir(dir);
    } catch {
      break;
    }
  }
  return removed;
}
