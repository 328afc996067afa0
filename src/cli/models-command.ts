import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline/promises';
import { InvalidArgumentError, Option, type Command } from 'commander';
import { loadFlagModel, parseModelSpec } from '../inference/model-catalog.ts';
import { discoverModels, parseDiscoverSources, type LocalModel } from '../models/model-discovery.ts';
import { listRepoModels, modelsDir, pullModel, type PullResult, type RepoListing } from '../models/model-pull.ts';
import { parseModelReference } from '../models/model-reference.ts';
import { removeSvcModel } from '../models/model-removal.ts';
import { UserError } from '../shared/user-error.ts';
import { DaemonClient, DEFAULT_DAEMON_URL, developerKeyHeaders, isRecord } from './daemon-client.ts';
import { formatSize, formatTable, modelDetails, modelTable, printable, viewFromDaemon, viewFromDisk, type ModelView } from './model-view.ts';
import { PullProgress } from './pull-progress.ts';
import { onStopSignals } from './stop-signals.ts';

/**
 * `svc models list | ps | info | rm | pull`. `list`, `ps` and `info` ask the running daemon
 * (`--url`) and read the disk when none answers; `rm` and `pull` work on `<data-dir>/models`.
 * Every failure is one line on stderr and a non-zero exit; `--json` prints only JSON on stdout.
 */
interface CommonOptions {
  dataDir?: string;
  url?: string;
  discover?: string;
  json?: boolean;
}

const dataDirOption = () => new Option('-d, --data-dir <dir>', 'svc data directory; models live in <dir>/models [default: ~/.svc]').env('SVC_DATA_DIR');
const urlOption = () => new Option('--url <url>', `the running daemon to ask [default: ${DEFAULT_DAEMON_URL}]`).env('SVC_URL');
const discoverOption = () => new Option('--discover <sources>', 'other tools\' stores read from disk: a comma list of ollama, huggingface, lmstudio; all or none [default: all]').env('SVC_DISCOVER');
const diskOption = () => new Option('--disk', 'read the models from disk even when a daemon is running');
const jsonOption = () => new Option('--json', 'print JSON on stdout');

function dataDirOf(opts: CommonOptions): string {
  return resolve(opts.dataDir ?? join(homedir(), '.svc'));
}

function print(json: boolean | undefined, value: unknown, text: () => string): void {
  process.stdout.write(json === true ? `${JSON.stringify(value, null, 2)}\n` : text());
}

function note(message: string): void {
  process.stderr.write(`${printable(message)}\n`);
}

async function discover(opts: CommonOptions): Promise<{ models: LocalModel[]; warnings: string[] }> {
  let sources;
  try {
    sources = parseDiscoverSources(opts.discover);
  } catch (error) {
    throw new UserError(`--discover: ${(error as Error).message}`, { exitCode: 2 });
  }
  return discoverModels({ dataDir: dataDirOf(opts), sources });
}

/** `--model PATH|ID=PATH` files, as `svc serve` would add them (errors are the user's to fix). */
async function flagModels(specs: readonly string[]): Promise<LocalModel[]> {
  return Promise.all(specs.map((spec) => loadFlagModel(parseModelSpec(spec))));
}

/** The daemon when one answers at `--url` (and `--disk` is not set). */
async function daemonFor(opts: CommonOptions & { disk?: boolean }): Promise<{ client: DaemonClient; health: Record<string, unknown> } | undefined> {
  let client: DaemonClient;
  try {
    client = new DaemonClient(opts.url ?? DEFAULT_DAEMON_URL, developerKeyHeaders(process.env));
  } catch (error) {
    throw new UserError((error as Error).message, { exitCode: 2 });
  }
  if (opts.disk === true) return undefined;
  const health = await client.health();
  return health === undefined ? undefined : { client, health };
}

/** A list of strings under health's `model` object (`loaded`, `warnings`); empty when absent. */
function healthModelStrings(health: Record<string, unknown>, key: 'loaded' | 'warnings'): string[] {
  const model = health.model;
  const value = isRecord(model) ? model[key] : undefined;
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
}

function loadedIds(health: Record<string, unknown>): string[] {
  return healthModelStrings(health, 'loaded');
}

function registerList(models: Command): void {
  models
    .command('list', { isDefault: true })
    .description('list the models: the running daemon\'s, or those on disk when none runs')
    .addOption(urlOption())
    .addOption(dataDirOption())
    .addOption(discoverOption())
    .addOption(new Option('-m, --model <path>', 'also a GGUF file, as PATH or ID=PATH, as `svc serve --model` takes it (implies --disk); repeatable').env('SVC_MODEL')
      .argParser((v: string, prev: string[] | undefined) => [...(prev ?? []), ...v.split(',')]))
    .addOption(diskOption())
    .addOption(jsonOption())
    // `svc models` runs `list`; anything after it that is not a subcommand is a typo worth naming.
    .allowExcessArguments(true)
    .action(async (opts: CommonOptions & { disk?: boolean; model?: string[] }, command: Command) => {
      if (command.args.length > 0) {
        process.stderr.write(`svc models: unknown command '${printable(command.args[0]!)}'; it has list, pull, rm, info, ps (svc models --help)\n`);
        process.exitCode = 2;
        return;
      }
      const flags = opts.model ?? [];
      const daemon = await daemonFor({ ...opts, disk: opts.disk === true || flags.length > 0 });
      let views: ModelView[];
      if (daemon !== undefined) {
        const loaded = new Set(loadedIds(daemon.health));
        views = (await daemon.client.models()).map((m) => viewFromDaemon(m, loaded));
        for (const w of healthModelStrings(daemon.health, 'warnings')) note(`warning: ${w}`);
      } else {
        if (opts.disk !== true && flags.length === 0) note(`no svc daemon at ${opts.url ?? DEFAULT_DAEMON_URL}; listing the models on disk`);
        const fromFlags = await flagModels(flags);
        const { models: found, warnings } = await discover(opts);
        for (const w of warnings) note(`warning: ${w}`);
        const flagIds = new Set(fromFlags.map((m) => m.id));
        views = [...fromFlags, ...found.filter((m) => !flagIds.has(m.id))].map(viewFromDisk);
      }
      print(opts.json, views, () => views.length === 0
        ? `No models. Pull one (svc models pull hf:owner/repo:Q4_K_M), put a .gguf file in ${modelsDir(dataDirOf(opts))}, or pass --model /path/to/model.gguf.\n`
        : modelTable(views, daemon !== undefined));
    });
}

function registerPs(models: Command): void {
  models
    .command('ps')
    .description('list the models the running daemon has loaded')
    .addOption(urlOption())
    .addOption(jsonOption())
    .action(async (opts: CommonOptions) => {
      const daemon = await daemonFor(opts);
      if (daemon === undefined) {
        note(`no svc daemon at ${opts.url ?? DEFAULT_DAEMON_URL}; no models are loaded`);
        print(opts.json, [], () => '');
        return;
      }
      const loaded = new Set(loadedIds(daemon.health));
      const all = (await daemon.client.models()).map((m) => viewFromDaemon(m, loaded));
      const views = all.filter((m) => loaded.has(m.id));
      // A loaded model the listing does not describe still shows, by id.
      for (const id of loaded) if (!views.some((v) => v.id === id)) views.push(viewFromDaemon({ id, state: 'loaded' }));
      print(opts.json, views, () => views.length === 0 ? `No models loaded (the daemon at ${daemon.client.base} loads one on its first request).\n` : modelTable(views, false));
    });
}

/** Loading reads the whole model file: allow a large one on a slow disk. */
const LOAD_TIMEOUT_MS = 10 * 60 * 1000;

/** `svc models load|unload <id>`: POST /api/models/load|unload on the running daemon (docs/models.md). */
function registerResidency(models: Command, action: 'load' | 'unload'): void {
  models
    .command(action)
    .description(action === 'load'
      ? 'load a model into the running daemon\'s memory now (it stays for the daemon\'s --keep-alive idle time)'
      : 'free a model\'s memory in the running daemon (after the requests running on it end)')
    .argument('<id>', 'the model id, as `svc models list` shows it')
    .addOption(urlOption())
    .addOption(jsonOption())
    .action(async (id: string, opts: CommonOptions) => {
      const daemon = await daemonFor(opts);
      if (daemon === undefined) throw new UserError(`no svc daemon at ${opts.url ?? DEFAULT_DAEMON_URL}; start one with svc serve`);
      const answer = await daemon.client.post(`/api/models/${action}`, LOAD_TIMEOUT_MS, { model: id });
      if (answer === undefined) throw new UserError(`the daemon at ${daemon.client.base} stopped answering`);
      const body = isRecord(answer.body) ? answer.body : {};
      if (answer.status >= 400) {
        const error = isRecord(body.error) && typeof body.error.message === 'string' ? body.error.message : `HTTP ${answer.status}`;
        throw new UserError(answer.status === 401 ? `${error} (set SVC_API_KEY to a developer key the daemon accepts)` : error);
      }
      const state = typeof body.state === 'string' ? body.state : 'unknown';
      print(opts.json, body, () => state === 'unloading' ? `${id}: unloading when its running requests end\n` : `${id}: ${state}\n`);
    });
}

function registerInfo(models: Command): void {
  models
    .command('info')
    .description('show a model\'s metadata: architecture, parameters, quantization, context length, size, source, path, capabilities')
    .argument('<id>', 'the model id, as `svc models list` shows it')
    .addOption(urlOption())
    .addOption(dataDirOption())
    .addOption(discoverOption())
    .addOption(diskOption())
    .addOption(jsonOption())
    .action(async (id: string, opts: CommonOptions & { disk?: boolean }) => {
      const daemon = await daemonFor(opts);
      if (daemon !== undefined) {
        const model = await daemon.client.model(id);
        if (model !== null) {
          const view = viewFromDaemon(model, new Set(loadedIds(daemon.health)));
          print(opts.json, view, () => modelDetails(view));
          return;
        }
        note(`the daemon at ${daemon.client.base} does not serve ${id}; looking on disk`);
      }
      const { models: found } = await discover(opts);
      const model = found.find((m) => m.id === id);
      if (model === undefined) throw new UserError(`no model '${id}'; svc models list shows the ids`);
      const view = viewFromDisk(model);
      print(opts.json, view, () => modelDetails(view));
    });
}

async function confirm(question: string): Promise<boolean> {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return /^y(es)?$/i.test((await rl.question(question)).trim());
  } finally {
    rl.close();
  }
}

function registerRm(models: Command): void {
  models
    .command('rm')
    .description('delete a model from svc\'s models folder (models of Ollama, Hugging Face and LM Studio stay with their tools)')
    .argument('<id>', 'the model id, as `svc models list` shows it')
    .addOption(dataDirOption())
    .addOption(discoverOption())
    .option('-y, --yes', 'delete without asking (required when stdin is not a terminal)')
    .addOption(jsonOption())
    .action(async (id: string, opts: CommonOptions & { yes?: boolean }) => {
      const { models: found } = await discover(opts);
      const model = found.find((m) => m.id === id);
      if (model === undefined) throw new UserError(`no model '${id}' on disk; svc models list shows the ids`);
      if (model.source === 'svc' && opts.yes !== true) {
        if (process.stdin.isTTY !== true) throw new UserError(`not deleting ${id} without confirmation: pass --yes`);
        if (!(await confirm(`Delete ${id} (${formatSize(model.sizeBytes)}, ${model.path})? [y/N] `))) {
          note('nothing deleted');
          return;
        }
      }
      const removed = await removeSvcModel(model, dataDirOf(opts));
      print(opts.json, { id, removed }, () => `deleted ${id} (${removed.join(', ')})\n`);
    });
}

function listingText(listing: RepoListing): string {
  if (listing.models.length === 0) return `${listing.owner}/${listing.repo} has no GGUF files.\n`;
  const rows = listing.models.map((m) => [m.path, formatSize(m.size ?? null), m.quantization ?? '-', m.files.length > 1 ? `${m.files.length} parts` : '']);
  const table = formatTable(['FILE', 'SIZE', 'QUANT', 'PARTS'], rows, new Set([1]));
  const example = listing.models.find((m) => m.quantization !== undefined) ?? listing.models[0]!;
  const byTag = example.quantization === undefined ? '' : ` or svc models pull hf:${listing.owner}/${listing.repo}:${example.quantization}`;
  return `${table}\nPull one with: svc models pull ${example.reference}${byTag}\n`;
}

function pullJson(result: PullResult) {
  return {
    id: result.id,
    path: result.path,
    files: result.files.map((f) => ({ path: f.path, bytes: f.bytes, sha256: f.sha256 ?? null, verified: f.verified, resumed_from: f.resumedFrom, already_present: f.alreadyPresent })),
  };
}

function registerPull(models: Command): void {
  models
    .command('pull')
    .description('download a GGUF model into <data-dir>/models, or list the GGUF files of a hub repository')
    .argument('<reference>', 'hf:owner/repo/file.gguf, hf:owner/repo:Q4_K_M, owner/repo (lists its GGUF files), or an https://…/file.gguf URL')
    .addOption(dataDirOption())
    .option('--revision <rev>', 'hub branch, tag or commit [default: main]')
    .option('--sha256 <hex>', 'the expected sha256 of a URL download (hub files carry their own)')
    .option('-f, --force', 'download again over a model that is already there')
    .addOption(new Option('--retries <n>', 'reconnections after a dropped transfer').default('3').argParser((v: string) => {
      if (!/^\d{1,3}$/.test(v)) throw new InvalidArgumentError('a whole number from 0 to 999');
      return v;
    }))
    .addOption(urlOption())
    .addOption(jsonOption())
    .addHelpText('after', '\nEnvironment: HF_ENDPOINT (the hub or a mirror, default https://huggingface.co), HF_TOKEN (for private and gated repositories; sent to HF_ENDPOINT only).')
    .action(async (reference: string, opts: CommonOptions & { revision?: string; sha256?: string; force?: boolean; retries: string }) => {
      const hubEndpoint = process.env.HF_ENDPOINT;
      const token = process.env.HF_TOKEN;
      const ref = parseModelReference(reference, { hubEndpoint: hubEndpoint === undefined || hubEndpoint.trim() === '' ? 'https://huggingface.co' : hubEndpoint, revision: opts.revision });
      if (ref.kind === 'hub-repo') {
        const listing = await listRepoModels(ref, { hubEndpoint, token });
        print(opts.json, listing, () => listingText(listing));
        return;
      }
      const controller = new AbortController();
      // First Ctrl-C: stop cleanly (the partial stays for a resume); a second one exits at once.
      const offSignals = onStopSignals(() => controller.abort(), () => process.exit(130), ['SIGINT', 'SIGTERM', 'SIGHUP']);
      const progress = new PullProgress({ stream: process.stderr, tty: process.stderr.isTTY === true });
      let result: PullResult;
      try {
        result = await pullModel(ref, {
          dataDir: dataDirOf(opts),
          hubEndpoint,
          token,
          force: opts.force,
          sha256: opts.sha256,
          retries: Number(opts.retries),
          signal: controller.signal,
          onEvent: progress.onEvent,
        });
      } finally {
        progress.close();
        offSignals();
      }
      print(opts.json, pullJson(result), () => `${result.id} is ready: ${result.path}\nUse it as "model": "${result.id}"\n`);
      // A running daemon lists the models it found at start; say so rather than let a request 404.
      const daemon = await daemonFor(opts).catch(() => undefined);
      if (daemon !== undefined && (await daemon.client.model(result.id).catch(() => null)) === null) {
        note(`the daemon at ${daemon.client.base} does not list ${result.id} yet; restart it to serve the new model`);
      }
    });
}

export function registerModelsCommand(program: Command): void {
  const models = program
    .command('models')
    .description('list, pull, inspect and delete models (svc models --help)');
  registerList(models);
  registerPull(models);
  registerInfo(models);
  registerPs(models);
  registerResidency(models, 'load');
  registerResidency(models, 'unload');
  registerRm(models);
}
