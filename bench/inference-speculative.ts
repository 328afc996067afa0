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
 * weights, so how often a draft agrees says little about a trained pair. The `cycle` model is the
 * constructed best case: its greedy output is a fixed word cycle (tiny-gguf.ts `cycle`), so the
 * repetitive prompt holds every continuation, and its draft, a small cycle model, agrees with it. Each round runs every
 * mode in rotating order; figures are medians of completion tokens / request wall time (greedy,
 * max_tokens N, one request at a time), and whether each mode's text equals `off`'s.
 *
 * Then, to show where the time goes, node-llama-cpp directly on the repetitive prompt: the cost
 * of evaluating 1, 2, 4 and 8 tokens in one batch (what checking k − 1 guesses costs), and
 * tokens/s with InputLookupTokenPredictor guessing at most 1, 3 (svc's `lookup`: the library's
 * default) or 8 tokens, with the guesses it validated and refuted.
 */
import { getLlama, InputLookupTokenPredictor, LlamaCompletion, LlamaLogLevel, type LlamaContextSequence } from 'node-llama-cpp';
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

/** node-llama-cpp directly: what a batch costs, and lookup with other guess lengths. */
export interface SpeculativeDirectResult {
  model: string;
  /**
   * Median ms to evaluate this many tokens in one batch, after the prompt: wall time, and the
   * process's CPU time (the evaluation runs on a thread of this process), which a loaded
   * machine inflates less than wall time.
   */
  batchMs: { tokens: number; ms: number; cpuMs: number }[];
  /** `maxGuesses` 0: no predictor. */
  lookup: { maxGuesses: number; tokensPerSecond: number; speedup: number; validated: number; refuted: number; sameTextAsOff: boolean }[];
}

const BATCH_SIZES = [1, 2, 4, 8];
const GUESS_LENGTHS = [0, 1, 3, 8];

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

async function measureDirect(key: string, path: string, prompt: string, options: SpeculativeScenarioOptions): Promise<SpeculativeDirectResult> {
  const llama = await getLlama({ gpu: false, build: 'never', progressLogs: false, logLevel: LlamaLogLevel.error, maxThreads: options.threads });
  const model = await llama.loadModel({ modelPath: path });
  const context = await model.createContext({ contextSize: 2048, sequences: GUESS_LENGTHS.length + 1, threads: options.threads });
  try {
    const promptTokens = model.tokenize(prompt);
    const probe = context.getSequence();
    await probe.evaluateWithoutGeneratingNewTokens(promptTokens);
    const batchMs = [];
    for (const tokens of BATCH_SIZES) {
      const times: number[] = [];
      const cpuTimes: number[] = [];
      for (let i = 0; i < 5 * options.rounds; i++) {
        const started = performance.now();
        const cpu = process.cpuUsage();
        await probe.evaluateWithoutGeneratingNewTokens(promptTokens.slice(-tokens));
        const used = process.cpuUsage(cpu);
        times.push(performance.now() - started);
        cpuTimes.push((used.user + used.system) / 1000);
        await probe.eraseContextTokenRanges([{ start: probe.nextTokenIndex - tokens, end: probe.nextTokenIndex }]);
      }
      batchMs.push({ tokens, ms: median(times), cpuMs: median(cpuTimes) });
    }
    const sides = GUESS_LENGTHS.map((maxGuesses) => {
      const sequence: LlamaContextSequence = maxGuesses === 0
        ? context.getSequence()
        : context.getSequence({ tokenPredictor: new InputLookupTokenPredictor({ predictionLength: { max: maxGuesses } }) });
      return { maxGuesses, sequence, completion: new LlamaCompletion({ contextSequence: sequence }), rates: [] as number[], text: '' };
    });
    // A first pass evaluates the prompt into every sequence; the rounds then reuse it.
    for (const side of sides) side.text = await side.completion.generateCompletion(prompt, { temperature: 0, maxTokens: options.maxTokens });
    const before = sides.map((side) => ({ ...side.sequence.tokenPredictions }));
    for (let round = 0; round < options.rounds; round++) {
      for (let i = 0; i < sides.length; i++) {
        const side = sides[(round + i) % sides.length]!;
        let tokens = 0;
        const started = performance.now();
        side.text = await side.completion.generateCompletion(prompt, { temperature: 0, maxTokens: options.maxTokens, onToken: (t) => { tokens += t.length; } });
        side.rates.push(tokens / ((performance.now() - started) / 1000));
      }
    }
    const base = median(sides[0]!.rates);
    return {
      model: key, batchMs,
      lookup: sides.map((side, i) => ({
        maxGuesses: side.maxGuesses, tokensPerSecond: median(side.rates), speedup: median(side.rates) / base,
        validated: side.sequence.tokenPredictions.validated - before[i]!.validated,
        refuted: side.sequence.tokenPredictions.refuted - before[i]!.refuted,
        sameTextAsOff: side.text === sides[0]!.text,
      })),
    };
  } finally {
    await context.dispose();
    await model.dispose();
    await llama.dispose();
  }
}

export async function runSpeculativeScenario(options: SpeculativeScenarioOptions): Promise<{ results: SpeculativeResult[]; direct: SpeculativeDirectResult[] }> {
  const results: SpeculativeResult[] = [];
  const direct: SpeculativeDirectResult[] = [];
  for (const { key, path, draftPath } of options.models) {
    const catalog = await ModelCatalog.load([{ id: key, path }]);
    const predictions = new Map<Mode, { validated: number; refuted: number }>();
    let repetitivePrompt: string | undefined;
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
      repetitivePrompt = prompts.repetitive;
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
    if (repetitivePrompt !== undefined) {
      options.progress(`${key}: node-llama-cpp directly, batch cost and lookup guess lengths`);
      direct.push(await measureDirect(key, path, repetitivePrompt, options));
    }
  }
  options.log('| model | workload | mode | tokens/s | vs off | guesses validated / refuted | text = off |');
  options.log('|---|---|---|---:|---:|---:|---|');
  for (const r of results) {
    options.log(`| ${r.model} | ${r.workload} | ${r.mode} | ${r.tokensPerSecond.toFixed(1)} | ${r.speedup.toFixed(2)}× | ${r.validated} / ${r.refuted} | ${r.sameTextAsOff ? 'yes' : 'no'} |`);
  }
  options.log('');
  options.log('node-llama-cpp directly, repetitive workload: ms to evaluate k tokens in one batch, and lookup guessing at most n tokens.');
  options.log('');
  options.log(`| model | batch ms, k = ${BATCH_SIZES.join(' / ')} | CPU ms | ${GUESS_LENGTHS.map((n) => (n === 0 ? 'no lookup t/s' : `n = ${n} t/s (vs none), validated / refuted`)).join(' | ')} | text = none |`);
  options.log(`|---|---|---|${GUESS_LENGTHS.map(() => '---:').join('|')}|---|`);
  for (const d of direct) {
    const cells = d.lookup.map((l) => (l.maxGuesses === 0 ? l.tokensPerSecond.toFixed(1) : `${l.tokensPerSecond.toFixed(1)} (${l.speedup.toFixed(2)}×), ${l.validated} / ${l.refuted}`));
    options.log(`| ${d.model} | ${d.batchMs.map((b) => b.ms.toFixed(2)).join(' / ')} | ${d.batchMs.map((b) => b.cpuMs.toFixed(2)).join(' / ')} | ${cells.join(' | ')} | ${d.lookup.every((l) => l.sameTextAsOff) ? 'yes' : 'no'} |`);
  }
  return { results, direct };
}
