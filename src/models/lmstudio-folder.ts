/**
 * LM Studio's models folder: `<publisher>/<repo>/<file>.gguf` (what its downloader writes;
 * hand-placed files may sit a level higher or lower, so a few levels are searched).
 */
import { findGgufFiles } from './gguf-file-walk.ts';
import type { ScanResult } from './model-candidate.ts';
import { lmStudioModelId } from './model-ids.ts';

const MAX_DEPTH = 4;

export async function scanLmStudioFolder(root: string): Promise<ScanResult> {
  const found = await findGgufFiles(root, MAX_DEPTH);
  return {
    candidates: found.files.map((f) => ({ id: lmStudioModelId(f.relativePath), path: f.path, parts: f.parts })),
    warnings: found.warnings.map((w) => `lmstudio: ${w}`),
  };
}
