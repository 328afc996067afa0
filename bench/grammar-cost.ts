/**
 * The cost of grammar-constrained decoding: svc's engine (LlamaEngine.chat, in this process, no
 * HTTP) generating on the same model, prompt, seed and token budget, side by side in every round,
 *
 *  - plain: free text;
 *  - json_object: `response_format: {type: "json_object"}` (node-llama-cpp's any-object grammar);
 *  - json_schema: `response_format` with a schema (an object holding a free string and a list);
 *  - tool call: `tools` + `tool_choice: "required"` (function-name then parameters grammar),
 *    compared with plain text after a prompt padded to the same length (see MODES).
 *
 * Decode rate = (completion tokens − 1) / (first streamed part → last streamed part), so the
 * prompt (longer with tools: the template documents them) stays out of it. Beside it, the same
 * tokens per second of this process's CPU time (process.cpuUsage, every thread) over that span:
 * on a shared machine the wall-clock rate follows the other processes' load (here 2 CPUs at load
 * 10 swing a mode 3× between rounds), the CPU time a token costs much less so. The modes take turns
 * within every round, rotating which goes first; figures are medians over rounds, and the ratio
 * to plain is the median of per-round ratios. Also measured: compiling a JSON schema into a
 * grammar (what the per-model grammar cache saves on a repeated schema) against a cache hit.
 *
 * Usage: npm run bench:grammar [-- --rounds 7 --max-tokens 96 --threads 1 --models tiny,big --json]
 */
import { availableParallelism, cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { getLlama } from 'node-llama-cpp';
import { z } from 'zod';
import { schemaToGbnf } from '../src/inference/schema-gbnf-writer.ts';
import type { ChatOptions, GenerationPart } from '../src/inference/language-model.ts';
import { LlamaEngine } from '../src/inference/llama-engine.ts';
import { ModelCatalog } from '../src/inference/model-catalog.ts';
import { tinyModelPath } from '../test/helpers/daemon-process.ts';
import { writeTinyGguf } from '../test/helpers/tiny-gguf.ts';

const { values: flags } = parseArgs({
  options: {
    rounds: { type: 'string', default: '7' },
    'max-tokens': { type: 'string', default: '96' },
    threads: { type: 'string', default: '1' },
    models: { type: 'string', default: 'tiny,big' },
    json: { type: 'boolean', default: false },
  },
});
const ROUNDS = Number(flags.rounds);
const MAX_TOKENS = Number(flags['max-tokens']);
const THREADS = Number(flags.threads);
const PROMPT = 'Write a long story about a fast local runtime, then summarise it.';

const BIG = { embedding: 512, blocks: 8, heads: 8, feedForward: 1408, name: 'svc-bench-512x8' };
const MODELS = new Map<string, { label: string; path: () => string }>([
  ['tiny', { label: 'tiny (test fixture: 64-dim, 2 blocks, 4 heads)', path: tinyModelPath }],
  ['big', {
    label: `bench (${BIG.embedding}-dim, ${BIG.blocks} blocks, ${BIG.heads} heads, ffn ${BIG.feedForward})`,
    path: () => writeTinyGguf(fileURLToPath(new URL('.cache/bench-512x8.gguf', import.meta.url)), BIG),
  }],
]);

// Free strings, so every constrained mode runs to max_tokens like plain text does.
const STORY_SCHEMA = { type: 'object', properties: { story: { type: 'string' }, words: { type: 'array', items: { type: 'string' } } }, required: ['story', 'words'], additionalProperties: false };
type ModeOptions = Pick<ChatOptions, 'tools' | 'toolChoice' | 'responseFormat'> & { padding?: boolean };
/**
 * The template documents tools in the prompt (~750 tokens on ChatML), and a longer context
 * decodes slower by itself (attention), so the tool call is also compared with plain text after
 * a prompt padded to the same length: that ratio is the function-calling grammar's own cost.
 */
const MODES: [string, ModeOptions][] = [
  ['plain', {}],
  ['json_object', { responseFormat: { type: 'json_object' } }],
  ['json_schema', { responseFormat: { type: 'json_schema', name: 'story', schema: STORY_SCHEMA, strict: true } }],
  ['plain, prompt as long as the tool call\'s', { padding: true }],
  ['tool call', { tools: [{ name: 'write_story', description: 'Writes a story', parameters: STORY_SCHEMA }], toolChoice: { type: 'required' } }],
];
const PADDED = MODES[3]![0];

const log = (line: string): void => { if (!flags.json) console.log(line); };
const progress = (line: string): void => { process.stderr.write(`${line}\n`); };

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

interface Sample { tokensPerSecond: number; tokensPerCpuSecond: number; tokens: number; promptTokens: number; finish: string }

async function generationCost(modelPath: string): Promise<Map<string, { rate: number; ratio: number; cpuRate: number; cpuRatio: number; tokens: number; promptTokens: number; finishes: string[] }>> {
  const catalog = await ModelCatalog.load([{ id: 'bench', path: modelPath }]);
  const quiet = { info() {}, warn() {}, debug() {} };
  const engine = new LlamaEngine(catalog, { parallel: 1, queueSize: 8, defaultMaxTokens: MAX_TOKENS, keepAliveMs: Number.POSITIVE_INFINITY, gpu: 'cpu', threads: THREADS, log: quiet });
  const model = engine.model('bench')!;
  let padding = '';
  const run = async ({ padding: padded, ...options }: ModeOptions, seed: number, maxTokens = MAX_TOKENS): Promise<Sample> => {
    let first = 0;
    let last = 0;
    let cpuFirst = 0;
    let cpuLast = 0;
    const onPart = (part: GenerationPart): void => {
      if (part.type === 'text-delta' && part.text === '') return;
      last = performance.now();
      const cpu = process.cpuUsage();
      cpuLast = cpu.user + cpu.system;
      if (first === 0) [first, cpuFirst] = [last, cpuLast];
    };
    const messages = padded === true ? [{ role: 'system' as const, content: padding }, { role: 'user' as const, content: PROMPT }] : [{ role: 'user' as const, content: PROMPT }];
    const result = await model.chat(messages, { ...options, maxTokens, temperature: 1, topP: 1, seed, onPart });
    const tokens = result.usage.completionTokens;
    return { tokensPerSecond: (tokens - 1) / ((last - first) / 1000), tokensPerCpuSecond: (tokens - 1) / ((cpuLast - cpuFirst) / 1e6), tokens, promptTokens: result.usage.promptTokens, finish: result.finishReason };
  };
  try {
    // Pad the plain prompt to the tool call's length (whole words of the fixture's vocabulary).
    const target = (await run(MODES.at(-1)![1], 0, 2)).promptTokens;
    for (let words = 64; ; words += 8) {
      padding = Array.from({ length: words }, (_, i) => ['the', 'model', 'runtime', 'local', 'fast', 'token'][i % 6]).join(' ');
      if ((await run({ padding: true }, 0, 1)).promptTokens >= target) break;
    }
    for (const [, options] of MODES) await run(options, 0); // load, compile, warm every prompt prefix
    const samples = new Map<string, Sample[]>(MODES.map(([name]) => [name, []]));
    const ratios = new Map<string, number[]>(MODES.map(([name]) => [name, []]));
    const cpuRatios = new Map<string, number[]>(MODES.map(([name]) => [name, []]));
    for (let round = 0; round < ROUNDS; round++) {
      const order = MODES.map((_m, i) => MODES[(i + round) % MODES.length]!);
      const rates = new Map<string, Sample>();
      for (const [name, options] of order) {
        const sample = await run(options, round + 1);
        samples.get(name)!.push(sample);
        rates.set(name, sample);
      }
      // The tool call against plain text after an equally long prompt; the others against plain.
      for (const [name] of MODES) {
        const against = rates.get(name === 'tool call' ? PADDED : 'plain')!;
        ratios.get(name)!.push(rates.get(name)!.tokensPerSecond / against.tokensPerSecond);
        cpuRatios.get(name)!.push(rates.get(name)!.tokensPerCpuSecond / against.tokensPerCpuSecond);
      }
      progress(`  round ${round + 1}/${ROUNDS}: ${MODES.map(([name]) => `${name} ${rates.get(name)!.tokensPerSecond.toFixed(0)} t/s (${rates.get(name)!.tokensPerCpuSecond.toFixed(0)} t/cpu-s)`).join(', ')}`);
    }
    return new Map(MODES.map(([name]) => {
      const s = samples.get(name)!;
      return [name, {
        rate: median(s.map((x) => x.tokensPerSecond)), ratio: median(ratios.get(name)!),
        cpuRate: median(s.map((x) => x.tokensPerCpuSecond)), cpuRatio: median(cpuRatios.get(name)!),
        tokens: median(s.map((x) => x.tokens)), promptTokens: median(s.map((x) => x.promptTokens)), finishes: [...new Set(s.map((x) => x.finish))],
      }];
    }));
  } finally {
    await engine.close();
  }
}

/** A schema's compile time into a llama.cpp grammar (cold) against what a cache hit costs. */
async function compileCost(): Promise<{ name: string; bytes: number; compileMs: number; hitMs: number }[]> {
  const llama = await getLlama({ gpu: false, build: 'never', maxThreads: THREADS, progressLogs: false });
  const wide = { type: 'object', properties: Object.fromEntries(Array.from({ length: 60 }, (_, i) => [`field_${i}`, i % 3 === 0 ? { type: 'string', maxLength: 40 } : i % 3 === 1 ? { type: 'array', items: { type: 'integer' }, maxItems: 8 } : { enum: ['a', 'b', 'c', null] }])) };
  const person = z.toJSONSchema(z.object({
    name: z.string().max(40), age: z.int(), email: z.string().max(60).nullable(), tags: z.array(z.string().max(10)).max(5),
    address: z.object({ street: z.string(), city: z.string(), zip: z.string().max(10) }), role: z.enum(['admin', 'user', 'guest']),
  }));
  const schemas: [string, unknown][] = [['small (2 fields)', STORY_SCHEMA], ['zod person (11 fields, nested)', person], ['wide (60 fields)', wide]];
  const out = [];
  try {
    for (const [name, schema] of schemas) {
      const compile: number[] = [];
      const hit: number[] = [];
      const cache = new Map<string, unknown>();
      for (let i = 0; i < 30; i++) {
        let t = performance.now();
        // What a first request pays: svc's writer, then llama.cpp's parse of the GBNF.
        const key = JSON.stringify(schema);
        cache.set(key, await llama.createGrammar({ grammar: schemaToGbnf(schema, 'bench') }));
        compile.push(performance.now() - t);
        t = performance.now();
        // What a repeated schema costs with the cache: the key (the schema's text), then a Map lookup.
        if (cache.get(JSON.stringify(schema)) === undefined) throw new Error('cache miss');
        hit.push(performance.now() - t);
      }
      out.push({ name, bytes: JSON.stringify(schema).length, compileMs: median(compile), hitMs: median(hit) });
    }
  } finally {
    await llama.dispose();
  }
  return out;
}

const report: Record<string, unknown> = {
  machine: { cpus: availableParallelism(), model: cpus()[0]?.model, loadavg: loadavg().map((l) => l.toFixed(2)), node: process.version },
  settings: { rounds: ROUNDS, maxTokens: MAX_TOKENS, threads: THREADS, temperature: 1 },
};
log(`# grammar cost — ${availableParallelism()} CPUs (${cpus()[0]?.model}), load ${loadavg().map((l) => l.toFixed(2)).join(' / ')}, node ${process.version}`);
log(`${ROUNDS} rounds, max_tokens ${MAX_TOKENS}, --threads ${THREADS}, temperature 1 (same seed for every mode within a round)\n`);
for (const key of flags.models.split(',')) {
  const entry = MODELS.get(key);
  if (entry === undefined) throw new Error(`unknown model '${key}' (tiny, big)`);
  progress(`${entry.label}`);
  const results = await generationCost(entry.path());
  report[key] = Object.fromEntries(results);
  log(`## ${entry.label}\n`);
  log('| mode | decode t/s (median) | ratio (median of per-round ratios) | decode t/CPU-s (median) | CPU ratio | completion tokens | prompt tokens | finish |');
  log('|---|---:|---:|---:|---:|---:|---:|---|');
  for (const [name, r] of results) {
    const against = name === 'tool call' ? ' vs padded plain' : name === 'plain' ? '' : ' vs plain';
    log(`| ${name} | ${r.rate.toFixed(0)} | ${r.ratio.toFixed(3)}×${against} | ${r.cpuRate.toFixed(0)} | ${r.cpuRatio.toFixed(3)}× | ${r.tokens} | ${r.promptTokens} | ${r.finishes.join(', ')} |`);
  }
  log('');
}
const compile = await compileCost();
report.compile = compile;
log('## compiling a JSON schema into a grammar\n');
log('| schema | JSON bytes | compile (median of 30) | cache hit (check + key + lookup) |');
log('|---|---:|---:|---:|');
for (const c of compile) log(`| ${c.name} | ${c.bytes} | ${c.compileMs.toFixed(2)} ms | ${c.hitMs.toFixed(3)} ms |`);
if (flags.json) console.log(JSON.stringify(report, null, 2));
