import { join } from 'node:path';
import type { Logger } from 'pino';
import type { EngineSettings } from './runtime-config.ts';
import { makePrivateDir } from '../shared/private-files.ts';
import { LlamaEngine } from '../inference/llama-engine.ts';
import { ModelCatalog } from '../inference/model-catalog.ts';

export interface LocalEngine {
  catalog: ModelCatalog;
  engine: LlamaEngine;
}

/**
 * The in-process llama.cpp engine over the models of `--model`, `<data-dir>/models` and the
 * stores `--discover` names: what `svc serve` and `svc hosted` both serve. Models load lazily;
 * a broken file is skipped with a warning in `catalog.warnings`, a bad `--model` throws.
 */
export async function openLocalEngine(settings: EngineSettings, log: Logger): Promise<LocalEngine> {
  // The data dir holds what the user stored and asked: theirs alone, made 0700 (and an older
  // svc's 0755 tightened) at every start of `svc serve` and `svc hosted`.
  await makePrivateDir(settings.dataDir);
  await makePrivateDir(join(settings.dataDir, 'models'));
  const catalog = await ModelCatalog.load(settings.models, { dataDir: settings.dataDir, sources: settings.discover });
  const engine = new LlamaEngine(catalog, {
    parallel: settings.parallel,
    queueSize: settings.queueSize,
    contextSize: settings.contextSize,
    defaultMaxTokens: settings.defaultMaxTokens,
    keepAliveMs: settings.keepAliveMs,
    maxLoadedModels: settings.maxLoadedModels,
    gpu: settings.gpu,
    threads: settings.threads,
    speculative: settings.speculative,
    log: log.child({ component: 'inference' }),
  });
  return { catalog, engine };
}
