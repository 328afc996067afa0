/**
 * Discovery of a 200-entry mixed store (goal: ≤ 100 ms): 50 models each in svc's folder,
 * Ollama's store, the Hugging Face hub cache and LM Studio's folder, every header with a
 * Llama 3-sized tokenizer (128,256 tokens, their types, 280,147 merges: ~7.6 MB of header,
 * the costly part of a header) and a tiny tensor section. Measured:
 *
 * - cold: no index cache (the first listing after new models arrive): every header is read;
 * - warm: the index cache is there and nothing changed: directories, manifests and stats only.
 *
 * Both in this process (medians of several rounds, JIT warm) and in a fresh `node` process each
 * time (what `svc serve` start-up pays). The files are hard links to a few distinct headers, so
 * the page cache holds them: a disk-cold read (just after boot) is not measured.
 *
 *   npx node bench/models-discovery.ts [--rounds 7] [--distinct 10] [--json]
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { headerBuffer, readGgufSummary } from '../src/models/gguf-header.ts';
import { discoverModels, type DiscoveryOptions } from '../src/models/model-discovery.ts';
import { buildGgufFixture } from '../test/helpers/gguf-fixtures.ts';
import { writeHubFile, writeModelFile, writeOllamaModel } from '../test/helpers/model-stores.ts';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '7' },
    distinct: { type: 'string', default: '10' },
    json: { type: 'boolean', default: false },
    /** Keep the store afterwards (its path is printed) for profiling with --once. */
    keep: { type: 'boolean', default: false },
    /** Internal: run one discovery and print its time (the fresh-process measurement). */
    once: { type: 'string' },
  },
});

const GOAL_MS = 100;
const PER_SOURCE = 50;

const optionsFor = (root: string, dataDir: string): DiscoveryOptions => ({
  dataDir,
  sources: new Set(['ollama', 'huggingface', 'lmstudio']),
  env: { OLLAMA_MODELS: join(root, 'ollama'), HF_HUB_CACHE: join(root, 'hub') },
  homeDir: join(root, 'home'),
  systemOllamaDir: null,
});

if (values.once !== undefined) {
  const { root, dataDir } = JSON.parse(values.once) as { root: string; dataDir: string };
  const start = performance.now();
  const result = await discoverModels(optionsFor(root, dataDir));
  const ms = performance.now() - start;
  process.stdout.write(`${JSON.stringify({ ms, models: result.models.length, headersRead: result.headersRead })}\n`);
  process.exit(0);
}

const rounds = Number(values.rounds);
const distinct = Number(values.distinct);
const root = mkdtempSync(join(tmpdir(), 'svc-bench-discovery-'));
const log = (line: string) => { if (!values.json) process.stdout.write(`${line}\n`); };

// Build the store: `distinct` real headers, each hard-linked under many names.
const buildStart = performance.now();
const ARCHS = ['llama', 'qwen2', 'mistral', 'gemma2', 'phi3'];
const sources = join(root, 'sources');
mkdirSync(sources);
const headers = Array.from({ length: distinct }, (_, i) => {
  const bytes = buildGgufFixture({
    architecture: ARCHS[i % ARCHS.length]!, name: `bench model ${i}`, fileType: [15, 7, 18, 2, 1][i % 5]!,
    sizeLabel: '8B', contextLength: 131_072, embeddingLength: 4096, chatTemplate: '{% for m in messages %}{{ m.content }}{% endfor %}',
    vocabSize: 128_256, merges: 280_147,
  });
  const path = join(sources, `h${i}.gguf`);
  writeFileSync(path, bytes);
  return { bytes, path };
});
const header = (i: number) => headers[i % distinct]!;
for (let i = 0; i < PER_SOURCE; i++) {
  const h = header(i);
  writeModelFile(join(root, 'svc', 'models', `svc-model-${i}.Q4_K_M.gguf`), h.bytes, { linkFrom: h.path });
  // Each Ollama model its own blob name (a real store has one blob per distinct model).
  writeOllamaModel(join(root, 'ollama'), { model: `model${i}`, tag: 'latest' }, h.bytes, { linkFrom: h.path, digest: (i + 1).toString(16).padStart(64, '0') });
  writeHubFile(join(root, 'hub'), `org${i % 10}/Repo${i}-GGUF`, 'a'.repeat(40), `repo${i}.Q4_K_M.gguf`, h.bytes, { main: true, linkFrom: h.path });
  writeModelFile(join(root, 'home', '.lmstudio', 'models', `publisher${i % 5}`, `Repo${i}-GGUF`, `repo${i}-Q4_K_M.gguf`), h.bytes, { linkFrom: h.path });
}
const headerMb = headers[0]!.bytes.length / 1024 / 1024;
log(`store: ${4 * PER_SOURCE} entries (${distinct} distinct ${headerMb.toFixed(1)} MB headers, hard-linked) built in ${((performance.now() - buildStart) / 1000).toFixed(1)} s in ${root}`);

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};

// svc's folder is `<dataDir>/models`, its index cache `<dataDir>/cache`: a cold listing starts
// with the cache removed.
const dataDir = join(root, 'svc');
const withoutCache = () => {
  rmSync(join(dataDir, 'cache'), { recursive: true, force: true });
  return dataDir;
};

const cpuMs = (usage: NodeJS.CpuUsage) => (usage.user + usage.system) / 1000;

/** Wall times, and this process's CPU time (user + system, less sensitive to other load). */
async function inProcess(): Promise<{ cold: number[]; warm: number[]; coldCpu: number[]; warmCpu: number[] }> {
  const cold: number[] = [];
  const warm: number[] = [];
  const coldCpu: number[] = [];
  const warmCpu: number[] = [];
  // One untimed round first, so the JIT has compiled the reader.
  await discoverModels(optionsFor(root, withoutCache()));
  for (let r = 0; r < rounds; r++) {
    const options = optionsFor(root, withoutCache());
    let cpu = process.cpuUsage();
    let start = performance.now();
    const first = await discoverModels(options);
    cold.push(performance.now() - start);
    coldCpu.push(cpuMs(process.cpuUsage(cpu)));
    if (first.models.length !== 4 * PER_SOURCE || first.warnings.length !== 0) throw new Error(`cold listing found ${first.models.length} models, warnings: ${first.warnings.join('; ')}`);
    cpu = process.cpuUsage();
    start = performance.now();
    const second = await discoverModels(optionsFor(root, dataDir));
    warm.push(performance.now() - start);
    warmCpu.push(cpuMs(process.cpuUsage(cpu)));
    if (second.headersRead !== 0 || second.models.length !== 4 * PER_SOURCE) throw new Error(`warm listing read ${second.headersRead} headers`);
  }
  return { cold, warm, coldCpu, warmCpu };
}

function freshProcess(): { cold: number[]; warm: number[] } {
  const cold: number[] = [];
  const warm: number[] = [];
  const script = fileURLToPath(import.meta.url);
  const once = (dataDir: string) => JSON.parse(execFileSync(process.execPath, [script, '--once', JSON.stringify({ root, dataDir })], { encoding: 'utf8' })) as { ms: number; headersRead: number };
  for (let r = 0; r < rounds; r++) {
    cold.push(once(withoutCache()).ms);
    const second = once(dataDir);
    if (second.headersRead !== 0) throw new Error('warm listing read headers');
    warm.push(second.ms);
  }
  return { cold, warm };
}

/** One header read on its own, repeated: the cost a cold listing pays per file. */
async function oneHeader(): Promise<number> {
  const buffer = headerBuffer();
  const times: number[] = [];
  for (let i = 0; i < 5 * rounds; i++) {
    const start = performance.now();
    await readGgufSummary(headers[i % distinct]!.path, buffer);
    times.push(performance.now() - start);
  }
  return median(times);
}

const load = loadavg()[0]!;
const headerMs = await oneHeader();
const inProc = await inProcess();
const fresh = freshProcess();
if (values.keep) log(`kept: --once '${JSON.stringify({ root, dataDir })}'`);
else rmSync(root, { recursive: true, force: true });

const result = {
  entries: 4 * PER_SOURCE,
  headerMb: Number(headerMb.toFixed(2)),
  goalMs: GOAL_MS,
  rounds,
  machine: { cpus: cpus().length, model: cpus()[0]?.model ?? 'unknown', loadavg1: Number(load.toFixed(2)), node: process.version },
  oneHeaderMs: headerMs,
  inProcess: { coldMs: median(inProc.cold), warmMs: median(inProc.warm), coldCpuMs: median(inProc.coldCpu), warmCpuMs: median(inProc.warmCpu) },
  freshProcess: { coldMs: median(fresh.cold), warmMs: median(fresh.warm) },
};

if (values.json) {
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
} else {
  const row = (name: string, ms: number) => `| ${name} | ${ms.toFixed(1)} | ${(ms / GOAL_MS).toFixed(2)}× | ${(ms / result.entries).toFixed(3)} |`;
  log(`machine: ${result.machine.cpus} × ${result.machine.model}, load ${result.machine.loadavg1}, Node ${result.machine.node}; medians of ${rounds} rounds`);
  log('');
  log('| listing | median ms | vs 100 ms goal | ms per entry | CPU ms (this process) |');
  log('|---|---:|---:|---:|---:|');
  log(`${row('warm (index cache), in process', result.inProcess.warmMs)} ${result.inProcess.warmCpuMs.toFixed(1)} |`);
  log(`${row('warm (index cache), fresh process', result.freshProcess.warmMs)} — |`);
  log(`${row('cold (no cache), in process', result.inProcess.coldMs)} ${result.inProcess.coldCpuMs.toFixed(1)} |`);
  log(`${row('cold (no cache), fresh process', result.freshProcess.coldMs)} — |`);
  log('');
  log(`one ${result.headerMb} MB header read alone: ${headerMs.toFixed(2)} ms (median)`);
}
