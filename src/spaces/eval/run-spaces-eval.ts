import { mkdtemp, rm } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { parseWithSchema } from '../../shared/parse-with-schema.ts';
import { openSpaceLibrary } from '../space-library.ts';
import { SEARCH_MODES } from '../space-types.ts';
import type { Embedder, SearchMode } from '../space-types.ts';
import { evaluateSpace } from './evaluate-space.ts';
import type { EvalReport } from './evaluate-space.ts';
import { generateLabelledSet } from './labelled-set.ts';

/**
 * `svc spaces eval` without the CLI: generates the labelled set, evaluates it on a fresh space
 * and returns the report (the CLI prints formatEvalReport(report), or the report as JSON).
 */
export interface RunSpacesEvalOptions {
  /**
   * The library's data directory. By default a temporary one, removed afterwards; in a given one
   * the evaluation uses a space of its own (`svc-eval-<random>`) and deletes it again.
   */
  dataDir?: string;
  /** Default: all three. */
  modes?: readonly SearchMode[];
  seed?: number | string;
  /** Default: the library's (the built-in hashed embedder). */
  embedder?: Embedder;
  onProgress?: (line: string) => void;
}

const optionsSchema = z.object({
  modes: z.array(z.enum(SEARCH_MODES)).min(1).max(SEARCH_MODES.length).refine((modes) => new Set(modes).size === modes.length, 'modes repeat').optional(),
  seed: z.union([z.number().int().safe(), z.string().min(1).max(100)]).optional(),
});

export async function runSpacesEval(options: RunSpacesEvalOptions = {}): Promise<EvalReport> {
  const checked = parseWithSchema(optionsSchema, { modes: options.modes, seed: options.seed });
  const temporary = options.dataDir === undefined ? await mkdtemp(join(tmpdir(), 'svc-spaces-eval-')) : null;
  const dataDir = temporary ?? options.dataDir!;
  const space = `svc-eval-${randomBytes(4).toString('hex')}`;
  const library = await openSpaceLibrary({ dataDir, ...(options.embedder ? { embedder: options.embedder } : {}) });
  try {
    const set = generateLabelledSet({ seed: checked.seed ?? 1 });
    return await evaluateSpace(library, set, {
      space,
      ...(checked.modes ? { modes: checked.modes } : {}),
      ...(options.onProgress ? { onProgress: options.onProgress } : {}),
    });
  } finally {
    try {
      if (temporary === null) await library.deleteSpace(space).catch(() => undefined);
    } finally {
      await library.close();
      if (temporary !== null) await rm(temporary, { recursive: true, force: true });
    }
  }
}
