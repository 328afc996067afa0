/**
 * The speculative scenario of bench:inference (`npm run bench:inference -- --scenario
 * speculative`): decode tokens/s of svc's engine (in process, no HTTP) with `--speculative off`,
 * `lookup` and `draft`, side by side, on two workloads:
 *
 *  - repetitive: a completion whose prompt is a story prompt and the model's own greedy
 *    continuation of it (256 tokens): greedy decoding of these random-weight models settles
 *    into a loop, so the reply repeats text the prompt already holds, as an edit of given code
 *    or a summary quoting its source does: prompt lookup's best case;
 *  - free: the chat prompt of the overhead scenario, nothing to copy.
 *
 * The draft model is the served model's first block only (tiny-gguf.ts keepBlocks): the same
 * embeddings, vocabulary and output layer, a fraction of the compute. The fixtures have random
 * weights, so how often a draft agrees says little about a trained pair. Each round runs every
 * mode in rotating order; figures are medians of completion tokens / request wall time (greedy,
 * max_tokens N, one request at a time), and whether each mode's text equals `off`'s.
 */
import { LlamaEngine } from '../src/inference/llama-engine.ts';
import type { SpeculativeSettings } from '../src/inference/llama-engine-options.ts';
import { ModelCatalog } from '../src/inference/model-catalog.ts';

export interface SpeculativeScenarioOptions {
  /** The served model and its draft. */
  models: { key: string; path: string; draftPath: string }[];
  rounds: number;
  maxTokens: number;
  threads: number;
  log: (line: string) => void;
  progress: (line: string) => void;
}

type Mode = SpeculativeSettings['mode'];
const MODES: readonly Mode[] = ['off', 'lookup', 'draft'];
const STORY = 'Write a long story about a fast local runtime, a quantum model and the people who use them.';

export interface SpeculativeResult {
  model: string;
  workload: 'repetitive' | 'free';
  mode: Mode;
  tokensPerSecond: number;
  /** Versus `off` in the same rounds. */
  speedup: number;
  validated: number;
  refuted: number;
  sameTextAsOff: boolean;
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

export async function runSpeculativeScenario(options: SpeculativeScenarioOptions): Promise<SpeculativeResult[]> {
  const results: SpeculativeResult[] = [];
  for (const { key, path, draftPath } of options.models) {
    const catalog = await ModelCatalog.load([{ id: key, path }]);
    const predictions = new Map<Mode, { validated: number; refuted: number }>();
    const engines = new Map<Mode, LlamaEngine>();
    for (const mode of MODES) {
      const counts = { validated: 0, refuted: 0 };
      predictions.set(mode, counts);
      const speculative: SpeculativeSettings = mode === 'draft' ? { mode, draftModelPath: draftPath } : { mode };
      engines.set(mode, new LlamaEngine(catalog, {
        parallel: 1, queueSize: 4, defaultMaxTokens: options.maxTokens, keepAliveMs: Number.POSITIVE_INFINITY, gpu: 'cpu',
        threads: options.threads, contextSize: 2048, speculative,
        log: {
          info() {}, warn() {},
          debug: (obj, msg) => {
            if (msg !== 'token predictions') return;
            counts.validated += (obj as { validated: number }).validated;
            counts.refuted += (obj as { refuted: number }).refuted;
          },
        },
      }));
    }
    try {
      const off = engines.get('off')!.model(key)!;
      options.progress(`${key}: writing the repetitive prompt`);
      const seed = await off.complete(STORY, { temperature: 0, maxTokens: 256 });
      const prompts = { repetitive: `${STORY}${seed.text}`, free: STORY } as const;
      for (const workload of ['repetitive', 'free'] as const) {
        for (const counts of predictions.values()) Object.assign(counts, { validated: 0, refuted: 0 });
        const rates = new Map<Mode, number[]>(MODES.map((m) => [m, []]));
        const texts = new Map<Mode, string>();
        for (let round = 0; round < options.rounds; round++) {
          for (let i = 0; i < MODES.length; i++) {
            const mode = MODES[(round + i) % MODES.length]!;
            const model = engines.get(mode)!.model(key)!;
            const started = performance.now();
            const reply = workload === 'repetitive'
              ? await model.complete(prompts.repetitive, { temperature: 0, maxTokens: options.maxTokens })
              : await model.chat([{ role: 'user', content: prompts.free }], { temperature: 0, maxTokens: options.maxTokens });
            const seconds = (performance.now() - started) / 1000;
            rates.get(mode)!.push(reply.usage.completionTokens / seconds);
            texts.set(mode, reply.text);
            options.progress(`${key} ${workload} round ${round + 1}/${options.rounds} ${mode}: ${(reply.usage.completionTokens / seconds).toFixed(1)} tok/s`);
          }
        }
        const base = median(rates.get('off')!);
        for (const mode of MODES) {
          const rate = median(rates.get(mode)!);
          const counts = predictions.get(mode)!;
          results.push({
            model: key, workload, mode, tokensPerSecond: rate, speedup: rate / base,
            validated: counts.validated, refuted: counts.refuted, sameTextAsOff: texts.get(mode) === texts.get('off'),
          });
        }
      }
    } finally {
      for (const engine of engines.values()) await engine.close();
    }
  }
  options.log('| model | workload | mode | tokens/s | vs off | guesses validated / refuted | text = off |');
  options.log('|---|---|---|---:|---:|---:|---|');
  for (const r of results) {
    options.log(`| ${r.model} | ${r.workload} | ${r.mode} | ${r.tokensPerSecond.toFixed(1)} | ${r.speedup.toFixed(2)}× | ${r.validated} / ${r.refuted} | ${r.sameTextAsOff ? 'yes' : 'no'} |`);
  }
  return results;
}
