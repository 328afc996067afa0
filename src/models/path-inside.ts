import { relative, resolve, sep } from 'node:path';

/** Whether `path` lies strictly inside the folder `root` (both absolute; no `..` escape, not root itself). */
export function isInside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel !== '' && rel !== '..' && !rel.startsWith(`..${sep}`) && resolve(root, rel) === path;
}
