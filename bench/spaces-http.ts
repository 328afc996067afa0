/**
 * A knowledge space through the daemon's HTTP API, as a user's client meets it: `svc serve` in its
 * own process (its own data dir), one space filled by multipart uploads of markdown files
 * (`?wait=true`, what `svc spaces add` sends), then the labelled set's queries searched hybrid.
 *
 * Measured: bulk ingest MB/s (wall) and MB per CPU second of the daemon and its extraction child
 * together, from /proc; the first search after the ingest; once the vector graph has caught up
 * (a space past the graph's threshold builds it between requests), hybrid search p50/p99 and
 * recall@10 over HTTP; the daemon's resident memory before and after, per chunk.
 *
 * The labelled set's 48 documents go up one file each (their ids are the answers); the bulk
 * documents are packed `--docs-per-file` to a file, `--files` files to a request, `--concurrency`
 * requests in flight (the next request's extraction overlaps the current one's writes).
 *
 * Usage: npm run bench:spaces-http [-- --chunks 100000 --docs-per-file 16 --files 50
 *        --concurrency 2 --rounds 1 --seed 1 --graph-wait-s 3600 --keep-data <dir> --json]
 * `--keep-data <dir>`: the daemon's data dir is <dir> (made if missing) and stays after the run,
 * the graph saved at shutdown: bench/spaces-dense-recall.ts opens it in process.
 */
import { mkdirSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { firstRelevantRank, percentile, recallAtK } from '../src/spaces/eval/eval-metrics.ts';
import { generateBulkDocuments, generateLabelledSet, type LabelledDocument } from '../src/spaces/eval/labelled-set.ts';
import { startDaemon } from '../test/helpers/daemon-process.ts';
import { rssMb } from '../test/helpers/large-bodies.ts';
import { processTreeCpuMs } from './process-cpu.ts';

const { values: flags } = parseArgs({
  options: {
    chunks: { type: 'string', default: '100000' },
    'docs-per-file': { type: 'string', default: '16' },
    files: { type: 'string', default: '50' },
    concurrency: { type: 'string', default: '2' },
    rounds: { type: 'string', default: '1' },
    seed: { type: 'string', default: '1' },
    'graph-wait-s': { type: 'string', default: '3600' },
    'keep-data': { type: 'string' },
    json: { type: 'boolean', default: false },
  },
});
const TARGET_CHUNKS = Number(flags.chunks);
const DOCS_PER_FILE = Math.max(1, Number(flags['docs-per-file']));
const FILES_PER_REQUEST = Math.min(100, Math.max(1, Number(flags.files)));
const CONCURRENCY = Math.max(1, Number(flags.concurrency));
const ROUNDS = Math.max(1, Number(flags.rounds));
const SEED = Number(flags.seed);
const SPACE = 'bench';

const log = (line: string): void => {
  process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${line}\n`);
};

const treeCpuSeconds = (pid: number): number => processTreeCpuMs(pid) / 1000;

interface UploadFile {
  name: string;
  text: string;
  /** The labelled document's key when the file is one (its id answers queries). */
  key?: string;
}

interface JobFile { filename: string; status: string; document_id: string | null; error: unknown }

const keepData = flags['keep-data'];
if (keepData !== undefined) mkdirSync(keepData, { recursive: true });
const daemon = await startDaemon({ withModel: false, dataDir: keepData });
const pid = daemon.child.pid!;
const base = `${daemon.url}/api`;
const post = async (path: string, body: unknown): Promise<Response> =>
  fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

try {
  const loadStart = loadavg();
  const created = await post('/spaces', { name: SPACE });
  if (!created.ok) throw new Error(`create space: ${created.status} ${await created.text()}`);
  const rssStart = rssMb(pid);

  const set = generateLabelledSet({ seed: SEED });
  const files: UploadFile[] = set.documents.map((doc: LabelledDocument, i) => ({ name: `labelled-${i}.md`, text: doc.markdown, key: doc.key }));
  let chunks = set.documents.reduce((n, doc) => n + doc.input.chunks.length, 0);
  let pack: string[] = [];
  for (const doc of generateBulkDocuments({ seed: SEED, reserved: set.names })) {
    if (chunks >= TARGET_CHUNKS) break;
    pack.push(doc.markdown);
    chunks += doc.input.chunks.length;
    if (pack.length === DOCS_PER_FILE) {
      files.push({ name: `bulk-${files.length}.md`, text: pack.join('\n\n') });
      pack = [];
    }
  }
  if (pack.length > 0) files.push({ name: `bulk-${files.length}.md`, text: pack.join('\n\n') });
  const requests: UploadFile[][] = [];
  for (let i = 0; i < files.length; i += FILES_PER_REQUEST) requests.push(files.slice(i, i + FILES_PER_REQUEST));
  const totalBytes = files.reduce((n, f) => n + Buffer.byteLength(f.text), 0);
  log(`${files.length} files, ${(totalBytes / 2 ** 20).toFixed(1)} MB, ~${chunks} chunks (the generator's chunking), ${requests.length} requests`);

  const idOfKey = new Map<string, string>();
  let failed = 0;
  let sent = 0;
  let doneBytes = 0;
  const cpuStart = treeCpuSeconds(pid);
  const ingestStart = performance.now();
  const upload = async (batch: UploadFile[]): Promise<void> => {
    const form = new FormData();
    for (const file of batch) form.append('file', new Blob([file.text], { type: 'text/markdown' }), file.name);
    const response = await fetch(`${base}/spaces/${SPACE}/documents?wait=true`, { method: 'POST', body: form });
    if (!response.ok) throw new Error(`upload: ${response.status} ${await response.text()}`);
    const job = (await response.json()) as { files: JobFile[] };
    job.files.forEach((file, i) => {
      if (file.status === 'failed') failed++;
      const key = batch[i]!.key;
      if (key !== undefined && file.document_id !== null) idOfKey.set(key, file.document_id);
    });
    doneBytes += batch.reduce((n, f) => n + Buffer.byteLength(f.text), 0);
  };
  const worker = async (): Promise<void> => {
    while (sent < requests.length) {
      const batch = requests[sent++]!;
      await upload(batch);
      if (sent % 50 === 0) log(`  ${sent}/${requests.length} requests, ${(doneBytes / 2 ** 20).toFixed(0)} MB, ${((doneBytes / 2 ** 20) / ((performance.now() - ingestStart) / 1000)).toFixed(2)} MB/s, RSS ${rssMb(pid).toFixed(0)} MB`);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const ingestSeconds = (performance.now() - ingestStart) / 1000;
  const ingestCpu = treeCpuSeconds(pid) - cpuStart;
  const rssAfterIngest = rssMb(pid);
  const space = (await (await fetch(`${base}/spaces/${SPACE}`)).json()) as { chunk_count: number; text_bytes: number };
  log(`ingested ${space.chunk_count} chunks in ${ingestSeconds.toFixed(1)} s (${failed} files failed), daemon RSS ${rssAfterIngest.toFixed(0)} MB`);

  const search = async (query: string): Promise<{ ms: number; results: { document_id: string; text: string }[] }> => {
    const t = performance.now();
    const response = await post(`/spaces/${SPACE}/search`, { query, mode: 'hybrid', top_k: 10 });
    if (!response.ok) throw new Error(`search: ${response.status} ${await response.text()}`);
    const body = (await response.json()) as { data: { document_id: string; text: string }[] };
    return { ms: performance.now() - t, results: body.data };
  };
  const firstSearch = await search(set.queries[0]!.text);
  log(`first hybrid search after the ingest: ${firstSearch.ms.toFixed(1)} ms`);

  // A space past the graph's threshold builds it between requests; wait until a search is as
  // fast as the graph makes it: the daemon's CPU goes quiet when nothing is pending.
  const graphWaitStart = performance.now();
  for (let quiet = 0; quiet < 3 && performance.now() - graphWaitStart < Number(flags['graph-wait-s']) * 1000;) {
    const before = treeCpuSeconds(pid);
    await new Promise((resolve) => setTimeout(resolve, 2000));
    quiet = treeCpuSeconds(pid) - before < 0.1 ? quiet + 1 : 0;
  }
  const graphWaitSeconds = (performance.now() - graphWaitStart) / 1000;
  log(`daemon idle after ${graphWaitSeconds.toFixed(0)} s (graph build, if any), RSS ${rssMb(pid).toFixed(0)} MB`);

  const latencies: number[] = [];
  const ranks: (number | null)[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    for (const query of set.queries) {
      const { ms, results } = await search(query.text);
      latencies.push(ms);
      if (round === 0) {
        const target = idOfKey.get(query.documentKey);
        ranks.push(firstRelevantRank(results, (r) => r.document_id === target && r.text.includes(query.answerSpan)));
      }
    }
  }
  const rssEnd = rssMb(pid);
  const result = {
    commit: process.env.GIT_COMMIT ?? null,
    machine: { cpus: cpus().length, cpu: cpus()[0]?.model, load_average_start: loadStart, load_average_end: loadavg() },
    files: files.length, requests: requests.length, files_per_request: FILES_PER_REQUEST, concurrency: CONCURRENCY, failed_files: failed,
    chunks: space.chunk_count, uploaded_mb: totalBytes / 2 ** 20, text_mb: space.text_bytes / 2 ** 20,
    ingest_seconds: ingestSeconds, ingest_mb_per_s: totalBytes / 2 ** 20 / ingestSeconds, ingest_cpu_seconds: ingestCpu, ingest_mb_per_cpu_s: totalBytes / 2 ** 20 / ingestCpu,
    first_search_ms: firstSearch.ms, graph_wait_seconds: graphWaitSeconds,
    hybrid_p50_ms: percentile(latencies, 50), hybrid_p99_ms: percentile(latencies, 99), hybrid_recall_at_10: recallAtK(ranks, 10), queries: latencies.length,
    rss_mb: { start: rssStart, after_ingest: rssAfterIngest, end: rssEnd, end_anonymous: rssMb(pid, 'RssAnon'), end_file: rssMb(pid, 'RssFile') },
    rss_bytes_per_chunk: ((rssEnd - rssStart) * 2 ** 20) / space.chunk_count,
  };
  if (flags.json) {
    console.log(JSON.stringify(result, null, 2));
  } else {
    const f = (v: number, d = 2) => v.toFixed(d);
    console.log(`spaces over HTTP: ${result.chunks} chunks, ${f(result.uploaded_mb, 1)} MB in ${result.files} files, ${result.requests} requests of ${FILES_PER_REQUEST}, ${CONCURRENCY} in flight; load ${loadStart.map((l) => f(l)).join(' ')} -> ${loadavg().map((l) => f(l)).join(' ')}`);
    console.log(`| ingest MB/s | MB per CPU s | first search ms | hybrid p50 / p99 ms | recall@10 | RSS start / after ingest / end MB | RSS B per chunk |`);
    console.log('|---:|---:|---:|---:|---:|---:|---:|');
    console.log(`| ${f(result.ingest_mb_per_s)} | ${f(result.ingest_mb_per_cpu_s)} | ${f(result.first_search_ms, 1)} | ${f(result.hybrid_p50_ms)} / ${f(result.hybrid_p99_ms)} | ${f(result.hybrid_recall_at_10, 3)} | ${f(rssStart, 0)} / ${f(rssAfterIngest, 0)} / ${f(rssEnd, 0)} | ${f(result.rss_bytes_per_chunk, 0)} |`);
  }
} finally {
  await daemon.stop();
}
