/**
 * Decode tokens/s of plain completions (`POST /v1/completions`' engine path) on the fixture
 * models, svc's LlamaEngine in this process: the cost of what svc does per generated token
 * there (its own token loop, plain-completion.ts). Greedy and sampled, on the plain tiny model
 * and on the byte-characters one (whose replies hold multi-byte characters split across tokens).
 * decode tokens/s = (tokens − 1) / (first text chunk → last text chunk), and CPU time (user +
 * system, this process, all threads) per generated token over the whole call, which a loaded
 * machine disturbs less than wall time; medians over rounds.
 *
 * Usage: node bench/completion-decode.ts [--rounds 15 --max-tokens 256 --threads 1]
 */
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { LlamaEngine } from '../src/inference/llama-engine.ts';
import { ModelCatalog } from '../src/inference/model-catalog.ts';
import { samplingFrom } from '../src/openai/sampling-from.ts';
import { DEFAULT_MAX_TOKENS } from '../src/app/runtime-config.ts';
import { byteCharactersModelPath, tinyModelPath } from '../test/helpers/daemon-process.ts';

const { values: flags } = parseArgs({
  options: { rounds: { type: 'string', default: '15' }, 'max-tokens': { type: 'string', default: '256' }, threads: { type: 'string', default: '1' } },
});
const ROUNDS = Number(flags.rounds);
const MAX_TOKENS = Number(flags['max-tokens']);
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const catalog = await ModelCatalog.load([{ id: 'tiny', path: tinyModelPath() }, { id: 'bytes', path: byteCharactersModelPath() }]);
const quiet = { info() {}, warn() {}, debug() {} };
const engine = new LlamaEngine(catalog, { parallel: 1, queueSize: 8, defaultMaxTokens: DEFAULT_MAX_TOKENS, keepAliveMs: Number.POSITIVE_INFINITY, gpu: 'cpu', threads: Number(flags.threads), maxLoadedModels: 2, log: quiet });
const cases = [
  { model: 'tiny', sampling: { temperature: 0 } },
  { model: 'tiny', sampling: { temperature: 1, seed: 1 } },
  { model: 'bytes', sampling: { temperature: 1, seed: 1 } },
];
const tps = cases.map(() => [] as number[]);
const cpuUs = cases.map(() => [] as number[]);
for (let round = 0; round <= ROUNDS; round++) {
  for (const [i, c] of cases.entries()) {
    let first = 0;
    let last = 0;
    const cpu = process.cpuUsage();
    const result = await engine.model(c.model)!.complete('Once upon a time', {
      ...samplingFrom(c.sampling, MAX_TOKENS),
      onPart: (part) => {
        if (part.type !== 'text-delta' || part.text === '') return;
        last = performance.now();
        if (first === 0) first = last;
      },
    });
    // Round 0 loads the models and warms up.
    const used = process.cpuUsage(cpu);
    if (round > 0) {
      tps[i]!.push((result.usage.completionTokens - 1) / ((last - first) / 1000));
      cpuUs[i]!.push((used.user + used.system) / result.usage.completionTokens);
    }
  }
}
await engine.close();
for (const [i, c] of cases.entries()) console.log(`${c.model} ${JSON.stringify(c.sampling)}: decode ${median(tps[i]!).toFixed(1)} tokens/s, ${median(cpuUs[i]!).toFixed(0)} µs CPU per token (median of ${ROUNDS}, max_tokens ${MAX_TOKENS})`);
console.log(`load average at end ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
