import { open, readdir, stat } from 'node:fs/promises';
import { basename, extname, join, resolve } from 'node:path';
import { UserError } from '../shared/user-error.ts';
import type { ModelDescriptor } from './language-model.ts';

/** A model the user configured: `--model PATH` or `--model ID=PATH`, or a file in `<data-dir>/models`. */
export interface ModelSpec {
  id: string;
  path: string;
}

/**
 * Parses a `--model` value. `ID=PATH` names the model explicitly; otherwise the id is the
 * file's base name without `.gguf`, which is what Ollama and llama-server users expect to type.
 */
export function parseModelSpec(value: string): ModelSpec {
  const eq = value.indexOf('=');
  // Only treat `=` as a separator when the left side looks like an id, not part of a path.
  if (eq > 0 && !value.slice(0, eq).includes('/')) {
    return { id: value.slice(0, eq), path: resolve(value.slice(eq + 1)) };
  }
  return { id: modelIdFromPath(value), path: resolve(value) };
}

export function modelIdFromPath(path: string): string {
  const name = basename(path);
  return extname(name).toLowerCase() === '.gguf' ? name.slice(0, -'.gguf'.length) : name;
}

async function hasGgufMagic(path: string): Promise<boolean> {
  const file = await open(path, 'r');
  try {
    const { bytesRead, buffer } = await file.read(Buffer.alloc(4), 0, 4, 0);
    return bytesRead === 4 && buffer.toString('latin1') === 'GGUF';
  } finally {
    await file.close();
  }
}

export class ModelCatalogError extends UserError {
  override name = 'ModelCatalogError';
}

/**
 * The models this daemon can serve, resolved once at start-up: explicit specs first, then
 * `*.gguf` files found in the models directory. Duplicate ids are an error the user must fix.
 */
export class ModelCatalog {
  readonly #models = new Map<string, ModelDescriptor & { path: string }>();
  readonly #skipped: string[] = [];

  static async load(specs: readonly ModelSpec[], modelsDir?: string): Promise<ModelCatalog> {
    const catalog = new ModelCatalog();
    for (const spec of specs) await catalog.#add(spec, true);
    if (modelsDir !== undefined) {
      let names: string[] = [];
      try {
        names = await readdir(modelsDir);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      }
      for (const name of names.sort()) {
        if (extname(name).toLowerCase() !== '.gguf') continue;
        const spec = { id: modelIdFromPath(name), path: join(modelsDir, name) };
        if (!catalog.#models.has(spec.id)) await catalog.#add(spec, false);
      }
    }
    return catalog;
  }

  async #add(spec: ModelSpec, explicit: boolean): Promise<void> {
    if (this.#models.has(spec.id)) throw new ModelCatalogError(`Two models share the id '${spec.id}'; name one with --model ID=PATH.`);
    let info;
    try {
      info = await stat(spec.path);
    } catch {
      if (explicit) throw new ModelCatalogError(`Model file not found: ${spec.path}`);
      return;
    }
    if (!info.isFile()) throw new ModelCatalogError(`Model path is not a file: ${spec.path}`);
    if (!(await hasGgufMagic(spec.path))) {
      // A stray or truncated file should be caught at start-up, not by the first user request.
      if (explicit) throw new ModelCatalogError(`Not a GGUF model file (no GGUF header): ${spec.path}`);
      this.#skipped.push(spec.path);
      return;
    }
    this.#models.set(spec.id, {
      id: spec.id,
      path: spec.path,
      created: Math.floor(info.mtimeMs / 1000),
      ownedBy: 'local',
      sizeBytes: info.size,
    });
  }

  list(): (ModelDescriptor & { path: string })[] {
    return [...this.#models.values()];
  }

  get(id: string): (ModelDescriptor & { path: string }) | undefined {
    return this.#models.get(id);
  }

  /** Files in the models directory that were not GGUF models (for a start-up warning). */
  get skipped(): readonly string[] {
    return this.#skipped;
  }

  get size(): number {
    return this.#models.size;
  }
}
