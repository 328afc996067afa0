import { readdir, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import { extname, join, resolve } from 'node:path';
import cliProgress from 'cli-progress';
import { InvalidArgumentError, Option, type Command } from 'commander';
import { openSpaceLibrary } from '../spaces/space-library.ts';
import { formatEvalReport } from '../spaces/eval/format-eval-report.ts';
import { runSpacesEval } from '../spaces/eval/run-spaces-eval.ts';
import { SEARCH_MODES, type SearchMode, type SearchResult, type SpaceRecord } from '../spaces/space-types.ts';
import { ApiError } from '../shared/api-error.ts';
import { UserError } from '../shared/user-error.ts';
import { DaemonClient, DEFAULT_DAEMON_URL } from './daemon-client.ts';
import { formatSize, formatTable, printable } from './model-view.ts';
import { HttpSpacesClient, LibrarySpacesClient, type SpacesClient } from './spaces-client.ts';

/**
 * `svc spaces list | create | add | search | docs | rm | eval`. While a daemon answers at
 * `--url` every command goes through it (its in-memory index must see each change); with none,
 * the command opens the data dir itself. `--json` prints only JSON on stdout.
 */
interface CommonOptions {
  dataDir?: string;
  url?: string;
  disk?: boolean;
  json?: boolean;
}

/** The file types a space accepts, by extension, for walking directories. */
const SUPPORTED_EXTENSIONS = new Set(['.txt', '.text', '.md', '.markdown', '.html', '.htm', '.pdf', '.docx', '.csv', '.json']);

const dataDirOption = () => new Option('-d, --data-dir <dir>', 'svc data directory; spaces live in <dir>/spaces [default: ~/.svc]').env('SVC_DATA_DIR');
const urlOption = () => new Option('--url <url>', `the running daemon to use [default: ${DEFAULT_DAEMON_URL}]`).env('SVC_URL');
const diskOption = () => new Option('--disk', 'open the data dir directly even when a daemon answers (stop the daemon first: its index would not see the change)');
const jsonOption = () => new Option('--json', 'print JSON on stdout');

function withCommon(command: Command): Command {
  return command.addOption(dataDirOption()).addOption(urlOption()).addOption(diskOption()).addOption(jsonOption());
}

async function open(opts: CommonOptions): Promise<SpacesClient> {
  if (opts.disk !== true) {
    let daemon: DaemonClient;
    try {
      daemon = new DaemonClient(opts.url ?? DEFAULT_DAEMON_URL);
    } catch (error) {
      throw new UserError((error as Error).message, { exitCode: 2 });
    }
    if ((await daemon.health()) !== undefined) return new HttpSpacesClient(daemon.base);
  }
  const dataDir = resolve(opts.dataDir ?? join(homedir(), '.svc'));
  return new LibrarySpacesClient(await openSpaceLibrary({ dataDir }), dataDir);
}

async function withClient<T>(opts: CommonOptions, work: (client: SpacesClient) => Promise<T>): Promise<T> {
  const client = await open(opts);
  try {
    return await work(client);
  } finally {
    await client.close();
  }
}

function print(json: boolean | undefined, value: unknown, text: () => string): void {
  process.stdout.write(json === true ? `${JSON.stringify(value, null, 2)}\n` : text());
}

function spaceTable(spaces: readonly SpaceRecord[]): string {
  if (spaces.length === 0) return 'No spaces yet: svc spaces create <name>, then svc spaces add <name> <files or dirs>.\n';
  const rows = spaces.map((s) => [s.name, String(s.document_count), String(s.chunk_count), formatSize(s.text_bytes), s.embedder + (s.reindex_required === true ? ' (reindex required)' : ''), s.updated_at]);
  return formatTable(['NAME', 'DOCUMENTS', 'CHUNKS', 'TEXT', 'EMBEDDER', 'UPDATED'], rows, new Set([1, 2, 3]));
}

function resultText(results: readonly SearchResult[]): string {
  if (results.length === 0) return 'No passage matched.\n';
  return results.map((r, i) => {
    const where = [r.title ?? r.source ?? r.document_id, ...r.heading_path].join(' › ') + (r.page === null ? '' : ` (page ${r.page})`);
    return `${i + 1}. ${printable(where)}  [${r.score.toFixed(4)}]\n   ${printable(r.snippet)}\n`;
  }).join('\n');
}

/** Every supported file under the given paths (directories walked, hidden entries skipped), sorted. */
export async function collectFiles(paths: readonly string[]): Promise<{ path: string; bytes: number }[]> {
  const found: { path: string; bytes: number }[] = [];
  const visit = async (path: string, explicit: boolean): Promise<void> => {
    let info;
    try {
      info = await stat(path);
    } catch {
      throw new UserError(`${path}: no such file or directory`);
    }
    if (info.isDirectory()) {
      const entries = (await readdir(path)).filter((name) => !name.startsWith('.')).sort();
      for (const name of entries) await visit(join(path, name), false);
    } else if (info.isFile() && (explicit || SUPPORTED_EXTENSIONS.has(extname(path).toLowerCase()))) {
      found.push({ path, bytes: info.size });
    }
  };
  for (const path of paths) await visit(path, true);
  return found;
}

function parseMetadata(value: string, previous: Record<string, string> = {}): Record<string, string> {
  const at = value.indexOf('=');
  if (at <= 0) throw new InvalidArgumentError('expected key=value');
  return { ...previous, [value.slice(0, at)]: value.slice(at + 1) };
}

function parseTopK(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 100) throw new InvalidArgumentError('expected a whole number from 1 to 100');
  return n;
}

export function registerSpacesCommand(program: Command): void {
  const spaces = program.command('spaces').description('knowledge spaces: documents you search and chat with, on this machine');

  withCommon(spaces.command('list', { isDefault: true }).description('list spaces'))
    .action(async (opts: CommonOptions) => {
      await withClient(opts, async (client) => {
        const list = await client.listSpaces();
        print(opts.json, list, () => spaceTable(list));
      });
    });

  withCommon(spaces.command('create').argument('<name>', 'letters, digits, ".", "_" and "-"; up to 64').description('create a space'))
    .action(async (name: string, opts: CommonOptions) => {
      await withClient(opts, async (client) => {
        const space = await client.createSpace(name);
        print(opts.json, space, () => `Created space ${space.name} (embedder ${space.embedder}).\n`);
      });
    });

  withCommon(
    spaces.command('add')
      .argument('<space>')
      .argument('<paths...>', 'files or directories (directories are walked for .txt .md .html .pdf .docx .csv .json)')
      .description('add documents to a space (the same text twice is kept once)')
      .option('--create', 'create the space if it does not exist')
      .option('-m, --metadata <key=value>', 'metadata for every document (repeatable)', parseMetadata),
  ).action(async (space: string, paths: string[], opts: CommonOptions & { create?: boolean; metadata?: Record<string, string> }) => {
    const files = await collectFiles(paths);
    if (files.length === 0) throw new UserError('no supported file found (.txt .md .html .pdf .docx .csv .json)');
    await withClient(opts, async (client) => {
      if (opts.create === true && !(await client.listSpaces()).some((s) => s.name.toLowerCase() === space.toLowerCase())) await client.createSpace(space);
      const total = files.reduce((n, f) => n + f.bytes, 0);
      const tty = process.stderr.isTTY && opts.json !== true;
      const bar = tty ? new cliProgress.SingleBar({ stream: process.stderr, format: 'adding {bar} {percentage}% | {files} | {file}', hideCursor: true }, cliProgress.Presets.shades_classic) : undefined;
      bar?.start(Math.max(total, 1), 0, { files: `0/${files.length}`, file: '' });
      const outcomes: { path: string; status: string; document_id: string | null; chunks: number; error: string | null }[] = [];
      let done = 0;
      for (const [i, file] of files.entries()) {
        bar?.update(done, { files: `${i}/${files.length}`, file: printable(file.path).slice(-40) });
        try {
          const { document, status } = await client.addFile(space, file.path, opts.metadata === undefined ? {} : { metadata: opts.metadata });
          outcomes.push({ path: file.path, status, document_id: document.id, chunks: document.chunk_count, error: null });
        } catch (error) {
          // A file that cannot be read or ingested is reported and the rest go on.
          if (!(error instanceof UserError) && !(error instanceof ApiError && error.status < 500) && !(error instanceof Error && 'syscall' in error)) throw error;
          outcomes.push({ path: file.path, status: 'failed', document_id: null, chunks: 0, error: error.message });
        }
        done += file.bytes;
        if (!tty && opts.json !== true) {
          const last = outcomes.at(-1)!;
          process.stderr.write(`[${i + 1}/${files.length}] ${printable(file.path)}: ${last.status}${last.error === null ? ` (${last.chunks} chunks)` : ` - ${printable(last.error)}`}\n`);
        }
      }
      bar?.update(total, { files: `${files.length}/${files.length}`, file: '' });
      bar?.stop();
      const failed = outcomes.filter((o) => o.status === 'failed');
      print(opts.json, outcomes, () => {
        const added = outcomes.filter((o) => o.status === 'added').length;
        const same = outcomes.filter((o) => o.status === 'unchanged').length;
        const lines = failed.map((o) => `failed: ${printable(o.path)}: ${printable(o.error ?? '')}\n`).join('');
        return `${lines}${added} added, ${same} already there, ${failed.length} failed (${formatSize(total)}) in ${space}.\n`;
      });
      if (failed.length > 0) process.exitCode = 1;
    });
  });

  withCommon(
    spaces.command('search')
      .argument('<space>')
      .argument('<query...>')
      .description('search a space')
      .addOption(new Option('--mode <mode>', 'hybrid, bm25 or dense').choices(SEARCH_MODES).default('hybrid'))
      .option('-k, --top-k <n>', 'how many passages (1-100)', parseTopK, 8),
  ).action(async (space: string, words: string[], opts: CommonOptions & { mode: SearchMode; topK: number }) => {
    await withClient(opts, async (client) => {
      const results = await client.search(space, { query: words.join(' '), mode: opts.mode, top_k: opts.topK });
      print(opts.json, results, () => resultText(results));
    });
  });

  withCommon(spaces.command('docs').argument('<space>').description('list the documents of a space'))
    .action(async (space: string, opts: CommonOptions) => {
      await withClient(opts, async (client) => {
        const documents = await client.listDocuments(space);
        print(opts.json, documents, () => documents.length === 0
          ? `No documents in ${space}.\n`
          : formatTable(['ID', 'TITLE', 'FORMAT', 'CHUNKS', 'TEXT', 'SOURCE'], documents.map((d) => [d.id, d.title ?? '', d.format, String(d.chunk_count), formatSize(d.text_bytes), d.source ?? '']), new Set([3, 4])));
      });
    });

  spaces.command('eval')
    .description('evaluate retrieval on a generated labelled set (464 queries, in a temporary store): recall@5/@10, MRR and latency per mode, stale-memory rejection, answer support, ingest speed')
    .addOption(new Option('--modes <modes>', 'comma list of hybrid, bm25, dense [default: all]'))
    .addOption(new Option('--seed <seed>', 'the labelled set\'s seed [default: 1]'))
    .addOption(jsonOption())
    .action(async (opts: { modes?: string; seed?: string; json?: boolean }) => {
      const modes = opts.modes?.split(',').map((m) => m.trim()).filter((m) => m !== '');
      for (const mode of modes ?? []) {
        if (!(SEARCH_MODES as readonly string[]).includes(mode)) throw new UserError(`--modes: '${mode}' is not one of ${SEARCH_MODES.join(', ')}`, { exitCode: 2 });
      }
      const report = await runSpacesEval({
        ...(modes === undefined ? {} : { modes: modes as SearchMode[] }),
        ...(opts.seed === undefined ? {} : { seed: /^\d+$/.test(opts.seed) ? Number(opts.seed) : opts.seed }),
        ...(opts.json === true ? {} : { onProgress: (line: string) => process.stderr.write(`${printable(line)}\n`) }),
      });
      print(opts.json, report, () => formatEvalReport(report));
    });

  withCommon(
    spaces.command('rm')
      .argument('<space>')
      .argument('[document-id]', 'remove only this document')
      .description('remove a space (and everything in it), or one document')
      .option('-y, --yes', 'remove a whole space without asking (required when stdin is not a terminal)'),
  ).action(async (space: string, documentId: string | undefined, opts: CommonOptions & { yes?: boolean }) => {
    await withClient(opts, async (client) => {
      if (documentId !== undefined) {
        await client.deleteDocument(space, documentId);
        print(opts.json, { space, document_id: documentId, deleted: true }, () => `Removed document ${documentId} from ${space}.\n`);
        return;
      }
      if (opts.yes !== true) {
        if (!process.stdin.isTTY) throw new UserError(`removing space '${space}' deletes all its documents: pass --yes to confirm`, { exitCode: 2 });
        const { createInterface } = await import('node:readline/promises');
        const rl = createInterface({ input: process.stdin, output: process.stderr });
        const answer = await rl.question(`Remove space ${space} and all its documents? [y/N] `);
        rl.close();
        if (!/^y(es)?$/i.test(answer.trim())) throw new UserError('not removed', { exitCode: 1 });
      }
      await client.deleteSpace(space);
      print(opts.json, { name: space, deleted: true }, () => `Removed space ${space}.\n`);
    });
  });
}
