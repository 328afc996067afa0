/**
 * The threads scenario of bench:inference (`npm run bench:inference -- --scenario threads`):
 * how long a short chat reply takes through a real `svc serve` with each thread setting, on a
 * quiet machine and on one kept busy by other processes (one busy-loop process per logical
 * CPU, as a test suite or a build would). The settings:
 *
 *  - `--threads 1`;
 *  - svc's default (cpu-threads.ts: physical cores − 1, at least 1), the daemon started with
 *    no `--threads` at all, so what it picks by itself is what is measured;
 *  - every physical core, when that differs from the others;
 *  - node-llama-cpp's own default on a CPU, max(4, llama.cpp's math cores), passed explicitly
 *    (svc no longer leaves the choice to it).
 *
 * One daemon per setting, all loaded before measuring; each round runs every setting quiet,
 * then starts the busy loops and runs every setting loaded, in rotating order. Figures are
 * medians of the wall time of one non-streamed request (max_tokens N, greedy).
 */
import { availableParallelism, loadavg } from 'node:os';
import { getLlama, LlamaLogLevel } from 'node-llama-cpp';
import { cpuCores, defaultThreads } from '../src/inference/cpu-threads.ts';
import { startDaemon, type DaemonProcess } from '../test/helpers/daemon-process.ts';
import { startBusyLoops, stopBusyLoops } from './busy-loops.ts';

export interface ThreadsScenarioOptions {
  models: { key: string; path: string }[];
  rounds: number;
  maxTokens: number;
  /** A request slower than this counts as this long (and is reported with ">"). */
  timeoutMs: number;
  log: (line: string) => void;
  progress: (line: string) => void;
}

interface Setting {
  label: string;
  /** `--threads` value, or undefined to let the daemon choose. */
  flag: number | undefined;
  threads: number;
}

export interface ThreadsResult {
  model: string;
  setting: string;
  threads: number;
  quietMs: number;
  loadedMs: number;
  quietTps: number;
  loadedTps: number;
  timedOut: number;
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/** Wall time of one non-streamed chat request, and its completion tokens. */
async function timeOne(url: string, maxTokens: number, timeoutMs: number): Promise<{ ms: number; tokens: number; timedOut: boolean }> {
  const start = performance.now();
  try {
    const res = await fetch(`${url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'bench', messages: [{ role: 'user', content: 'Tell me about threads.' }], max_tokens: maxTokens, temperature: 0 }),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const body = (await res.json()) as { usage?: { completion_tokens: number } };
    if (!res.ok || body.usage === undefined) throw new Error(`HTTP ${res.status}: ${JSON.stringify(body)}`);
    return { ms: performance.now() - start, tokens: body.usage.completion_tokens, timedOut: false };
  } catch (error) {
    if ((error as Error).name !== 'TimeoutError') throw error;
    return { ms: timeoutMs, tokens: 0, timedOut: true };
  }
}

/** node-llama-cpp's default thread count on a CPU (Llama's constructor: max(4, cpuMathCores)). */
async function nodeLlamaCppDefault(): Promise<number> {
  const llama = await getLlama({ gpu: false, build: 'never', progressLogs: false, logLevel: LlamaLogLevel.error });
  try {
    return llama.maxThreads;
  } finally {
    await llama.dispose();
  }
}

export async function runThreadsScenario(options: ThreadsScenarioOptions): Promise<ThreadsResult[]> {
  const cores = cpuCores();
  const llamaDefault = await nodeLlamaCppDefault();
  const settings: Setting[] = [
    { label: '--threads 1', flag: 1, threads: 1 },
    { label: 'svc default (no flag)', flag: undefined, threads: defaultThreads(cores) },
    { label: `node-llama-cpp default (--threads ${llamaDefault})`, flag: llamaDefault, threads: llamaDefault },
  ];
  // Every physical core, when that is none of the above: what "minus one" gives up.
  if (!settings.some((s) => s.threads === cores.usable)) {
    settings.splice(2, 0, { label: `all physical cores (--threads ${cores.usable})`, flag: cores.usable, threads: cores.usable });
  }
  const results: ThreadsResult[] = [];
  for (const model of options.models) {
    const daemons: DaemonProcess[] = [];
    try {
      for (const setting of settings) {
        daemons.push(await startDaemon({
          withModel: false,
          args: ['--model', `bench=${model.path}`, '--keep-alive', 'forever', ...(setting.flag === undefined ? [] : ['--threads', String(setting.flag)])],
          // The test helper sets SVC_THREADS=1; empty means "not set".
          env: { SVC_THREADS: '' },
        }));
      }
      // The default daemon must have picked what cpu-threads.ts says, or this measures nothing.
      const health = (await (await fetch(`${daemons[1]!.url}/health`)).json()) as { model: { threads?: number } };
      if (health.model.threads !== settings[1]!.threads) throw new Error(`the default daemon uses ${health.model.threads} threads, expected ${settings[1]!.threads}`);
      for (const d of daemons) await timeOne(d.url, options.maxTokens, 10 * options.timeoutMs);

      const quiet = settings.map(() => [] as number[]);
      const loaded = settings.map(() => [] as number[]);
      const tokens = settings.map(() => [] as number[]);
      const timedOut = settings.map(() => 0);
      for (let r = 0; r < options.rounds; r++) {
        const order = settings.map((_, i) => (i + r) % settings.length);
        for (const i of order) {
          const t = await timeOne(daemons[i]!.url, options.maxTokens, options.timeoutMs);
          quiet[i]!.push(t.ms);
          if (t.timedOut) timedOut[i]!++;
          else tokens[i]!.push(t.tokens);
        }
        // One busy loop per logical CPU: the "busy machine".
        const loops = startBusyLoops(availableParallelism());
        try {
          // Let the scheduler see the loops as busy before measuring.
          await new Promise((resolve) => setTimeout(resolve, 500));
          for (const i of order) {
            const t = await timeOne(daemons[i]!.url, options.maxTokens, options.timeoutMs);
            loaded[i]!.push(t.ms);
            if (t.timedOut) timedOut[i]!++;
            else tokens[i]!.push(t.tokens);
          }
        } finally {
          await stopBusyLoops(loops);
        }
        options.progress(`  [${model.key}] round ${r + 1}/${options.rounds}: ${settings.map((s, i) => `${s.threads} thr quiet ${quiet[i]!.at(-1)!.toFixed(0)} ms, loaded ${loaded[i]!.at(-1)!.toFixed(0)} ms`).join('; ')}`);
      }
      for (const [i, setting] of settings.entries()) {
        const n = median(tokens[i]!.length > 0 ? tokens[i]! : [options.maxTokens]);
        const q = median(quiet[i]!);
        const l = median(loaded[i]!);
        results.push({ model: model.key, setting: setting.label, threads: setting.threads, quietMs: q, loadedMs: l, quietTps: n / (q / 1000), loadedTps: n / (l / 1000), timedOut: timedOut[i]! });
      }
    } finally {
      await Promise.all(daemons.map((d) => d.stop()));
    }
  }

  const { log } = options;
  log(`# threads under load — ${cores.usable} usable physical core(s) (${cores.source}${cores.quota === undefined ? '' : `, cgroup quota ${cores.quota}`}), ${availableParallelism()} logical; load average ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
  log(`# one non-streamed chat request, max_tokens ${options.maxTokens}, greedy; medians of ${options.rounds} rounds; "loaded" = ${availableParallelism()} busy-loop processes running`);
  log('');
  const timeouts = results.filter((r) => r.timedOut > 0);
  if (timeouts.length > 0) log(`# requests over ${(options.timeoutMs / 1000).toFixed(0)} s were stopped and count as ${(options.timeoutMs / 1000).toFixed(0)} s: ${timeouts.map((r) => `${r.model} ${r.setting} ×${r.timedOut}`).join(', ')}`);
  log('| model | setting | threads | quiet ms | quiet t/s | loaded ms | loaded t/s | loaded vs --threads 1 |');
  log('|---|---|---:|---:|---:|---:|---:|---:|');
  for (const r of results) {
    const one = results.find((x) => x.model === r.model && x.threads === 1 && x.setting === '--threads 1')!;
    log(`| ${r.model} | ${r.setting} | ${r.threads} | ${r.quietMs.toFixed(0)} | ${r.quietTps.toFixed(1)} | ${r.loadedMs.toFixed(0)} | ${r.loadedTps.toFixed(1)} | ${(r.loadedMs / one.loadedMs).toFixed(1)}× |`);
  }
  return results;
}
