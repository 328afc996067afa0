import type { Dirent } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { splitPartName, splitPartOf } from './model-ids.ts';

/** A `.gguf` file found under a root; a split model is found as its first part. */
export interface GgufFile {
  /** Path below the root with `/` separators, e.g. `publisher/repo/model.gguf`. */
  relativePath: string;
  path: string;
  /** Every file of the model, the first part first (one entry unless split). */
  parts: string[];
}

export interface WalkResult {
  files: GgufFile[];
  warnings: string[];
}

function errorText(error: unknown): string {
  const e = error as NodeJS.ErrnoException;
  return e.code ?? e.message;
}

/** A directory's entries sorted by name, or the warning that says why it could not be read. */
export async function readDirectory(dir: string): Promise<{ entries: Dirent[] } | { missing: true } | { warning: string }> {
  try {
    const entries = await readdir(dir, { withFileTypes: true });
    return { entries: entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)) };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { missing: true };
    return { warning: `cannot read directory ${dir} (${errorText(error)}); skipped` };
  }
}

function isGgufName(name: string): boolean {
  return name.toLowerCase().endsWith('.gguf');
}

/**
 * Finds `.gguf` files under `root`, at most `maxDepth` directories deep (0: the root's own
 * files). A missing root is no error (that tool is not installed); an unreadable directory is
 * one warning. Hidden entries are skipped. Symlinks are followed, for files (the Hugging Face
 * cache is made of them) and for directories within the depth bound. Split models are listed
 * once, as their first part, and only when every part is there.
 */
export async function findGgufFiles(root: string, maxDepth: number): Promise<WalkResult> {
  const walk = async (dir: string, prefix: string, depth: number): Promise<WalkResult> => {
    const files: GgufFile[] = [];
    const warnings: string[] = [];
    const listing = await readDirectory(dir);
    if ('missing' in listing) return { files, warnings };
    if ('warning' in listing) return { files, warnings: [listing.warning] };
    const names = new Set<string>();
    const subdirs: Dirent[] = [];
    for (const entry of listing.entries) {
      if (entry.name.startsWith('.')) continue;
      if (isGgufName(entry.name) && (entry.isFile() || entry.isSymbolicLink())) names.add(entry.name);
      else if (depth < maxDepth && entry.isDirectory()) subdirs.push(entry);
      else if (depth < maxDepth && entry.isSymbolicLink()) {
        try {
          if ((await stat(join(dir, entry.name))).isDirectory()) subdirs.push(entry);
        } catch (error) {
          // A link to nothing says nothing; a loop or a forbidden target is a directory we cannot read.
          if ((error as NodeJS.ErrnoException).code !== 'ENOENT') warnings.push(`cannot read directory ${join(dir, entry.name)} (${errorText(error)}); skipped`);
        }
      }
    }
    const orphans = new Map<string, number>();
    for (const name of names) {
      const split = splitPartOf(name);
      const path = join(dir, name);
      if (split === undefined) {
        files.push({ relativePath: prefix + name, path, parts: [path] });
        continue;
      }
      if (split.part !== 1) {
        const first = splitPartName(name, 1);
        if (!names.has(first)) orphans.set(first, split.count);
        continue;
      }
      const parts = Array.from({ length: split.count }, (_, i) => splitPartName(name, i + 1));
      const absent = parts.filter((p) => !names.has(p));
      if (absent.length > 0) {
        warnings.push(`split model ${path} is missing ${absent.length === 1 ? 'part' : 'parts'} ${absent.join(', ')}; skipped`);
        continue;
      }
      files.push({ relativePath: prefix + name, path, parts: parts.map((p) => join(dir, p)) });
    }
    for (const first of orphans.keys()) warnings.push(`split model parts in ${dir} without their first part ${first}; skipped`);
    // Subdirectories are read concurrently; their results are joined in name order.
    const below = await Promise.all(subdirs.map((sub) => walk(join(dir, sub.name), `${prefix}${sub.name}/`, depth + 1)));
    for (const result of below) {
      files.push(...result.files);
      warnings.push(...result.warnings);
    }
    return { files, warnings };
  };

  return walk(root, '', 0);
}
