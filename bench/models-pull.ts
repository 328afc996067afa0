/**
 * What `svc models pull` costs beyond moving the bytes: a SIZE_MIB file served by the mock hub's
 * CDN on loopback, pulled through the hub routes (repository info, tree, the resolve 302), hashed
 * (sha256, verified), fsynced and renamed into place — next to the same bytes fetched from the
 * same CDN URL and written to a file with nothing else (global fetch), and by curl when present.
 * Then a resume: the same pull with half the file already in `.partial` (re-hashed, then Range).
 * Medians over RUNS runs, side by side in one process (the hub on a worker thread). Usage: npm run bench:models-pull [-- --runs 5 --mib 256]
 */
import { execFile, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { pullModel } from '../src/models/model-pull.ts';
import { startMockHub } from '../test/helpers/mock-hub.ts';

if (!isMainThread) {
  const file = Buffer.from((workerData as { file: Uint8Array }).file);
  const hub = await startMockHub({ repos: [{ owner: 'bench', repo: 'big', files: { 'big-Q4_K_M.gguf': file } }] });
  hub.addFile('big-Q4_K_M.gguf', file);
  parentPort!.postMessage({ hubUrl: hub.url, cdnUrl: hub.cdnUrl });
} else {
  await main();
}

async function main(): Promise<void> {
  const arg = (name: string, fallback: number) => {
    const i = process.argv.indexOf(name);
    return i > 0 ? Number(process.argv[i + 1]) : fallback;
  };
  const RUNS = arg('--runs', 5);
  const SIZE_MIB = arg('--mib', 256);

  const file = randomBytes(SIZE_MIB * 1024 * 1024);
  file.write('GGUF', 0, 'latin1');
  // The hub runs on its own thread, so svc, fetch and curl all share the machine the same way.
  const server = new Worker(new URL(import.meta.url), { workerData: { file } });
  const { hubUrl, cdnUrl } = await new Promise<{ hubUrl: string; cdnUrl: string }>((resolve) => server.once('message', resolve));
  const url = `${cdnUrl}/files/big-Q4_K_M.gguf`;
  const hasCurl = spawnSync('curl', ['--version']).status === 0;
  const root = mkdtempSync(join(tmpdir(), 'svc-bench-pull-'));

  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const time = async (fn: () => Promise<void>) => {
    const start = performance.now();
    await fn();
    return performance.now() - start;
  };

  async function plainFetch(dest: string): Promise<void> {
    const response = await fetch(url);
    const out = await open(dest, 'w');
    try {
      for await (const chunk of response.body!) await out.write(chunk);
    } finally {
      await out.close();
    }
  }

  const results = { svc: [] as number[], fetch: [] as number[], curl: [] as number[], resume: [] as number[] };
  for (let run = 0; run < RUNS; run++) {
    const dir = mkdtempSync(join(root, 'run-'));
    results.fetch.push(await time(() => plainFetch(join(dir, 'fetch.gguf'))));
    // Asynchronously: the mock hub serves from this very process.
    if (hasCurl) results.curl.push(await time(async () => { await promisify(execFile)('curl', ['-s', '-o', join(dir, 'curl.gguf'), url]); }));
    results.svc.push(await time(async () => { await pullModel({ kind: 'hub-quant', owner: 'bench', repo: 'big', tag: 'Q4_K_M', revision: undefined }, { dataDir: join(dir, 'svc'), hubEndpoint: hubUrl }); }));
    // Half the file already downloaded: re-hash it, then Range for the rest.
    const resumeDir = join(dir, 'resume');
    const partial = join(resumeDir, 'models', 'hf', 'bench', 'big', 'big-Q4_K_M.gguf.partial');
    mkdirSync(join(partial, '..'), { recursive: true });
    writeFileSync(partial, file.subarray(0, file.length / 2));
    results.resume.push(await time(async () => { await pullModel({ kind: 'hub-quant', owner: 'bench', repo: 'big', tag: 'Q4_K_M', revision: undefined }, { dataDir: resumeDir, hubEndpoint: hubUrl }); }));
    rmSync(dir, { recursive: true, force: true });
  }
  await server.terminate();
  rmSync(root, { recursive: true, force: true });

  const mibps = (ms: number) => (SIZE_MIB / (ms / 1000)).toFixed(0);
  const svc = median(results.svc);
  const plain = median(results.fetch);
  console.log(`models-pull: ${SIZE_MIB} MiB over loopback, ${RUNS} runs, ${cpus().length} × ${cpus()[0]?.model ?? '?'}, ${tmpdir()}`);
  console.log(`  plain fetch → file      ${plain.toFixed(0)} ms (${mibps(plain)} MiB/s)`);
  if (hasCurl) console.log(`  curl -o                 ${median(results.curl).toFixed(0)} ms (${mibps(median(results.curl))} MiB/s)`);
  console.log(`  svc pull (verified)     ${svc.toFixed(0)} ms (${mibps(svc)} MiB/s)  = ${(svc / plain).toFixed(2)}× plain fetch${hasCurl ? `, ${(svc / median(results.curl)).toFixed(2)}× curl` : ''}`);
  console.log(`  svc pull, half resumed  ${median(results.resume).toFixed(0)} ms  = ${(median(results.resume) / svc).toFixed(2)}× a full pull`);
}
