import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { Option, type Command } from 'commander';
import { ModelCatalog, parseModelSpec } from '../inference/model-catalog.ts';
import { parseDiscoverSources } from '../models/model-discovery.ts';

/** `svc models list`: what `svc serve` would serve, read from disk (no daemon needed). */
export function registerModelsCommand(program: Command): void {
  const models = program.command('models').description('list the models the daemon serves');
  models
    .command('list', { isDefault: true })
    .description('list GGUF models from --model flags and <data-dir>/models')
    .addOption(new Option('-d, --data-dir <dir>', 'svc data directory [default: ~/.svc]').env('SVC_DATA_DIR'))
    .addOption(new Option('-m, --model <path>', 'a GGUF file, as PATH or ID=PATH; repeatable').env('SVC_MODEL')
      .argParser((v: string, prev: string[] | undefined) => [...(prev ?? []), ...v.split(',')]))
    .option('--json', 'print JSON')
    .action(async (opts: { dataDir?: string; model?: string[]; json?: boolean }) => {
      const dataDir = resolve(opts.dataDir ?? join(homedir(), '.svc'));
      const catalog = await ModelCatalog.load((opts.model ?? []).map(parseModelSpec), { dataDir, sources: parseDiscoverSources(process.env.SVC_DISCOVER) });
      const list = catalog.list();
      if (opts.json === true) {
        process.stdout.write(`${JSON.stringify(list.map((m) => ({ id: m.id, path: m.path, size_bytes: m.sizeBytes, created: m.created })), null, 2)}\n`);
        return;
      }
      if (list.length === 0) {
        process.stdout.write(`No models. Put a .gguf file in ${join(dataDir, 'models')} or pass --model /path/to/model.gguf.\n`);
        return;
      }
      const width = Math.max(...list.map((m) => m.id.length), 2);
      process.stdout.write(`${'ID'.padEnd(width)}  ${'SIZE'.padStart(9)}  PATH\n`);
      for (const m of list) {
        const size = `${((m.sizeBytes ?? 0) / 1024 / 1024).toFixed(1)} MiB`;
        process.stdout.write(`${m.id.padEnd(width)}  ${size.padStart(9)}  ${m.path}\n`);
      }
    });
}
