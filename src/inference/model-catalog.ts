import { stat } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { GgufFormatError, readGgufSummary } from '../models/gguf-header.ts';
import { modelCapabilities, parameterSize } from '../models/model-capabilities.ts';
import { discoverModels, type DiscoveryOptions, type LocalModel } from '../models/model-discovery.ts';
import { modelIdFromFileName, splitPartName, splitPartOf } from '../models/model-ids.ts';
import { UserError } from '../shared/user-error.ts';
import type { ModelDescriptor } from './language-model.ts';

/** A model the user configured: `--model PATH` or `--model ID=PATH`. */
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

/** The file name without `.gguf` (and without a split model's `-00001-of-0000N`). */
export function modelIdFromPath(path: string): string {
  return modelIdFromFileName(basename(path));
}

export class ModelCatalogError extends UserError {
  override name = 'ModelCatalogError';
}

/** A catalog entry: what `/v1/models` shows, and where the file is. */
export type CatalogModel = ModelDescriptor & { path: string; source: LocalModel['source']; local: LocalModel };

function describe(model: LocalModel): CatalogModel {
  const { gguf } = model;
  return {
    id: model.id,
    created: Math.floor(model.modifiedMs / 1000),
    ownedBy: 'local',
    path: model.path,
    sizeBytes: model.sizeBytes,
    source: model.source,
    architecture: gguf.architecture,
    parameterCount: gguf.parameterCount > 0 ? gguf.parameterCount : null,
    parameterSize: parameterSize(gguf),
    quantization: gguf.quantization,
    contextLength: gguf.contextLength,
    embeddingLength: gguf.embeddingLength,
    capabilities: modelCapabilities(gguf),
    local: model,
  };
}

/** Reads a `--model` file; anything wrong with it is fatal, since the user asked for it by name. */
export async function loadFlagModel(spec: ModelSpec): Promise<LocalModel> {
  let info;
  try {
    info = await stat(spec.path);
  } catch {
    throw new ModelCatalogError(`Model file not found: ${spec.path}`);
  }
  if (!info.isFile()) throw new ModelCatalogError(`Model path is not a file: ${spec.path}`);
  let gguf;
  try {
    gguf = await readGgufSummary(spec.path);
  } catch (error) {
    // A stray or truncated file should be caught at start-up, not by the first user request.
    if (error instanceof GgufFormatError) throw new ModelCatalogError(`Not a GGUF model file (${error.message}): ${spec.path}`);
    throw new ModelCatalogError(`Cannot read model file ${spec.path} (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
  }
  let sizeBytes = info.size;
  let parameterCount = gguf.parameterCount;
  // llama.cpp loads a split model's other parts itself; count them in the size and parameters.
  const split = splitPartOf(basename(spec.path));
  if (split !== undefined && split.part === 1) {
    for (let part = 2; part <= split.count; part++) {
      const path = join(dirname(spec.path), splitPartName(basename(spec.path), part));
      const more = await stat(path).catch(() => undefined);
      if (more === undefined) throw new ModelCatalogError(`Split model ${spec.path} is missing its part ${path}`);
      sizeBytes += more.size;
      parameterCount += (await readGgufSummary(path).catch(() => undefined))?.parameterCount ?? 0;
    }
  }
  return { id: spec.id, path: spec.path, source: 'flag', sizeBytes, modifiedMs: info.mtimeMs, gguf: { ...gguf, parameterCount } };
}

/**
 * The models this daemon can serve, resolved once at start-up: `--model` flags first (their
 * errors are fatal; two flags with one id are an error the user must fix), then what
 * discovery finds in svc's folder and the enabled stores. A discovered model whose id a flag
 * already uses is left out with a warning.
 */
export class ModelCatalog {
  #models = new Map<string, CatalogModel>();
  #warnings: string[] = [];
  #discovery: DiscoveryOptions | undefined;

  /**
   * `discovery` undefined: the flags alone (benchmarks, embedding). Otherwise svc's folder
   * under `discovery.dataDir` and the sources in `discovery.sources`.
   */
  static async load(specs: readonly ModelSpec[], discovery?: DiscoveryOptions): Promise<ModelCatalog> {
    const catalog = new ModelCatalog();
    catalog.#discovery = discovery;
    for (const spec of specs) {
      if (catalog.#models.has(spec.id)) throw new ModelCatalogError(`Two models share the id '${spec.id}'; name one with --model ID=PATH.`);
      catalog.#models.set(spec.id, describe(await loadFlagModel(spec)));
    }
    if (discovery !== undefined) await catalog.#discover(catalog.#models, catalog.#warnings, discovery);
    return catalog;
  }

  async #discover(models: Map<string, CatalogModel>, warnings: string[], discovery: DiscoveryOptions): Promise<void> {
    const found = await discoverModels(discovery);
    warnings.push(...found.warnings);
    for (const model of found.models) {
      const flag = models.get(model.id);
      if (flag !== undefined) {
        warnings.push(`${model.source}: ${model.id} (${model.path}) has the id of a --model flag (${flag.path}); serving the flag's`);
        continue;
      }
      models.set(model.id, describe(model));
    }
  }

  /**
   * Discovers again (after a pull or a delete through the API), keeping the `--model` flags as
   * read at start-up; the new list replaces the old one at once, so a listing never sees half.
   */
  async refresh(): Promise<void> {
    if (this.#discovery === undefined) return;
    const models = new Map([...this.#models].filter(([, m]) => m.source === 'flag'));
    const warnings: string[] = [];
    await this.#discover(models, warnings, this.#discovery);
    this.#models = models;
    this.#warnings = warnings;
  }

  list(): CatalogModel[] {
    return [...this.#models.values()];
  }

  get(id: string): CatalogModel | undefined {
    return this.#models.get(id);
  }

  /** What discovery skipped or overrode, one line each (logged once at start-up). */
  get warnings(): readonly string[] {
    return this.#warnings;
  }

  get size(): number {
    return this.#models.size;
  }
}
