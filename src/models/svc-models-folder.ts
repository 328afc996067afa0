/**
 * svc's own folder, `<data-dir>/models`: GGUF files placed at its top level (id: the file name
 * without `.gguf`), and Hugging Face files that `svc models pull` placed under
 * `hf/<owner>/<repo>/<path in repo>` (id: `hf:owner/repo/<path in repo>`, the same id the hub
 * cache gives the same file).
 */
import { join } from 'node:path';
import { findGgufFiles } from './gguf-file-walk.ts';
import type { ModelCandidate, ScanResult } from './model-candidate.ts';
import { huggingFaceModelId, modelIdFromFileName } from './model-ids.ts';

/** owner/repo plus the depth GGUF files have inside a repository. */
const MAX_HF_DEPTH = 2 + 4;

export async function scanSvcModelsFolder(modelsDir: string): Promise<ScanResult> {
  const [top, hub] = await Promise.all([findGgufFiles(modelsDir, 0), findGgufFiles(join(modelsDir, 'hf'), MAX_HF_DEPTH)]);
  const warnings = [...top.warnings, ...hub.warnings].map((w) => `svc: ${w}`);
  const candidates: ModelCandidate[] = top.files.map((f) => ({ id: modelIdFromFileName(f.relativePath), path: f.path, parts: f.parts }));
  for (const file of hub.files) {
    const [owner, repo, ...rest] = file.relativePath.split('/');
    if (owner === undefined || repo === undefined || rest.length === 0) {
      warnings.push(`svc: ${file.path} is not in hf/<owner>/<repo>/; skipped`);
      continue;
    }
    candidates.push({ id: huggingFaceModelId(owner, repo, rest.join('/')), path: file.path, parts: file.parts });
  }
  return { candidates, warnings };
}
