/**
 * Inference through the daemon, side by side with llama.cpp's own server and with
 * node-llama-cpp called directly. The same GGUF, prompt and greedy parameters are streamed
 * through `POST /v1/chat/completions` of a real `svc serve` process and of `llama-server`
 * (built from the llama.cpp source node-llama-cpp ships, see bench/llama-server.ts; same
 * threads, 4 slots of the same per-slot context), both read by the same HTTP client code; the
 * direct side is node-llama-cpp in this process, and svc's LlamaEngine in this process (no
 * HTTP) splits svc's own overhead into layers. The sides take turns within every round;
 * figures are medians over the rounds.
 *
 *  1. decode tokens/s: (tokens − 1) / (first content chunk → last content chunk)
 *  2. warm time to first token: request start → first content chunk
 *  3. aggregate tokens/s of 4 concurrent streams vs 1 (continuous batching), and each of the
 *     4 streams' time to first token
 *  4. SSE: content events per token, and TCP reads per token as the client saw them
 *
 *  5. CPU per generated token of the two server processes (svc's daemon, llama-server): user +
 *     system time from /proc over each 1- and N-stream batch, divided by its tokens; for the
 *     daemon also its main thread's alone (the event loop: HTTP, SSE and node-llama-cpp's
 *     JavaScript side), the rest being llama.cpp's compute and libuv's threads
 *
 * Usage: npm run bench:inference [-- --rounds 10 --batch-rounds 5 --max-tokens N --threads 1,2
 *        --models tiny,big,cycle --no-llama-server --load 2 --json]
 * (max_tokens defaults to 128 on both models.) `--load N` runs N busy-loop processes beside the
 * bench while it measures (started after the warm-up): the loaded machine of issue 30.
 *
 * `--scenario threads` runs inference-threads.ts instead: one short reply with `--threads 1`,
 * svc's default and node-llama-cpp's default, on a quiet and on a busy machine
 * (`--rounds` defaults to 5 there, `--max-tokens` to 16).
 *
 * `--scenario speculative` runs inference-speculative.ts instead: tokens/s with `--speculative`
 * off, lookup and draft side by side, on a repetitive and a free workload (`--rounds` defaults
 * to 3 there, `--max-tokens` to 64, `--threads` to its first value).
 */
import { Agent } from 'node:http';
import { postSse, StaleSocketError } from './sse-post.ts';
import { cpus, loadavg, availableParallelism } from 'node:os';
import { statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { getLlama, LlamaChat, LlamaLogLevel, resolveChatWrapper, type ChatHistoryItem } from 'node-llama-cpp';
import { LlamaEngine } from '../src/inference/llama-engine.ts';
import { ModelCatalog } from '../src/inference/model-catalog.ts';
import { samplingFrom } from '../src/openai/sampling-from.ts';
import { DEFAULT_MAX_TOKENS } from '../src/app/runtime-config.ts';
import { startDaemon, tinyModelPath, type DaemonProcess } from '../test/helpers/daemon-process.ts';
import { writeTinyGguf } from '../test/helpers/tiny-gguf.ts';
import { runThreadsScenario } from './inference-threads.ts';
import { startBusyLoops, stopBusyLoops } from './busy-loops.ts';
import { mainThreadCpuMs, processCpuMs } from './process-cpu.ts';
import { runSpeculativeScenario } from './inference-speculative.ts';
import { ensureLlamaServer, llamaServerVersion, nodeLlamaCppCpuVariant, startLlamaServer, type LlamaServerProcess } from './llama-server.ts';

const { values: flags } = parseArgs({
  options: {
    rounds: { type: 'string', default: '10' },
    'batch-rounds': { type: 'string', default: '5' },
    'max-tokens': { type: 'string' },
    threads: { type: 'string', default: '1,2' },
    models: { type: 'string', default: 'tiny,big' },
    concurrency: { type: 'string', default: '4' },
    load: { type: 'string', default: '0' },
    'llama-server': { type: 'boolean', default: true },
    scenario: { type: 'string', default: 'overhead' },
    json: { type: 'boolean', default: false },
  },
  allowNegative: true,
});
const ROUNDS = Number(flags.rounds);
const BATCH_ROUNDS = Number(flags['batch-rounds']);
const MAX_TOKENS = flags['max-tokens'] === undefined ? undefined : Number(flags['max-tokens']);
const THREADS = flags.threads.split(',').map(Number);
const CONCURRENCY = Number(flags.concurrency);
const LOAD = Number(flags.load);
/** The daemon's default: 4 sequences per model; the direct side and llama-server get the same shape. */
const SEQUENCES = 4;
const CONTEXT_CAP = 4096;
const PROMPT = 'Write a long story about a fast local runtime, a quantum model and the people who use them.';
const HISTORY: ChatHistoryItem[] = [{ type: 'user', text: PROMPT }, { type: 'model', response: [] }];

const BIG = { embedding: 512, blocks: 8, heads: 8, feedForward: 1408, name: 'svc-bench-512x8' };
/** `draftPath`: the model's first block only, a draft of the same vocabulary (the speculative scenario). */
const MODELS: Record<string, { label: string; maxTokens: number; path: () => string; draftPath: () => string }> = {
  tiny: {
    label: 'tiny (test fixture: 64-dim, 2 blocks, 4 heads)', maxTokens: 128, path: tinyModelPath,
    draftPath: () => writeTinyGguf(fileURLToPath(new URL('.cache/tiny-draft-k1.gguf', import.meta.url)), { keepBlocks: 1 }),
  },
  big: {
    maxTokens: 128,
    label: `bench (${BIG.embedding}-dim, ${BIG.blocks} blocks, ${BIG.heads} heads, ffn ${BIG.feedForward})`,
    path: () => writeTinyGguf(fileURLToPath(new URL('.cache/bench-512x8.gguf', import.meta.url)), BIG),
    draftPath: () => writeTinyGguf(fileURLToPath(new URL('.cache/bench-512x8-draft-k1.gguf', import.meta.url)), { ...BIG, keepBlocks: 1 }),
  },
  // The bench model's shape and cost with tiny-gguf.ts's `cycle` weights: greedy decoding walks a
  // fixed cycle of words, so a prompt holding the cycle is continued along it and a cycle model
  // of any size agrees with it: speculation's best case, constructed (see docs/BENCHMARKS.md).
  // Its draft is the test fixture's shape with the same construction (64-dim, 2 blocks).
  cycle: {
    maxTokens: 128,
    label: `bench shape with cycle weights (${BIG.embedding}-dim, ${BIG.blocks} blocks: greedy output is a fixed word cycle)`,
    path: () => writeTinyGguf(fileURLToPath(new URL('.cache/bench-512x8-cycle.gguf', import.meta.url)), { ...BIG, cycle: true, name: 'svc-bench-512x8-cycle' }),
    draftPath: () => writeTinyGguf(fileURLToPath(new URL('.cache/tiny-cycle.gguf', import.meta.url)), { cycle: true, name: 'svc-tiny-cycle' }),
  },
};

const log = (line: string): void => { if (!flags.json) console.log(line); };
const progress = (line: string): void => { process.stderr.write(`${line}\n`); };

/** One generation seen from the caller. */
interface Sample {
  ttftMs: number;
  /** First to last content chunk. */
  decodeMs: number;
  totalMs: number;
  /** Tokens generated: max_tokens when the generation stopped for length, else the reported count. */
  tokens: number;
  /** What the server's usage said (HTTP sides). */
  reportedTokens: number;
  /** Content events (SSE `data:` lines with non-empty content). */
  chunks: number;
  /** Socket reads that carried at least one content event (HTTP sides). */
  reads: number;
  text: string;
}
const decodeRate = (s: Sample): number => (s.tokens - 1) / (s.decodeMs / 1000);

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/** Tracks content chunk timing the same way for every side. */
class ChunkClock {
  readonly #start = performance.now();
  #first = 0;
  #last = 0;
  chunks = 0;
  reads = 0;
  text = '';
  chunk(text: string): void {
    if (text === '') return;
    const now = performance.now();
    if (this.chunks === 0) this.#first = now;
    this.#last = now;
    this.chunks++;
    this.text += text;
  }
  sample(tokens: number, reportedTokens = tokens): Sample {
    return {
      ttftMs: this.#first - this.#start,
      decodeMs: this.#last - this.#first,
      totalMs: performance.now() - this.#start,
      tokens,
      reportedTokens,
      chunks: this.chunks,
      reads: this.reads,
      text: this.text,
    };
  }
}

// ---- HTTP: node:http with keep-alive (the lightest client, so the client's own cost stays out),
// the same code for svc and llama-server.

const agent = new Agent({ keepAlive: true, maxSockets: 16 });

/**
 * One streamed chat completion. A kept-alive socket the server has closed meanwhile fails on
 * reuse with ECONNRESET before anything was sent back (llama-server closes idle connections):
 * that request is sent again on a fresh socket.
 */
async function streamChat(base: string, model: string, maxTokens: number): Promise<Sample> {
  try {
    return await streamChatOnce(base, model, maxTokens);
  } catch (error) {
    if (error instanceof StaleSocketError) return streamChatOnce(base, model, maxTokens);
    throw error;
  }
}

async function streamChatOnce(base: string, model: string, maxTokens: number): Promise<Sample> {
  const body = JSON.stringify({
    model,
    messages: [{ role: 'user', content: PROMPT }],
    max_tokens: maxTokens,
    temperature: 0,
    stream: true,
    stream_options: { include_usage: true },
  });
  const clock = new ChunkClock();
  let reported = -1;
  let finish: string | undefined;
  let chunksBefore = 0;
  await postSse(`${base}/v1/chat/completions`, body, agent, (data) => {
    const chunk = data as { choices: { delta?: { content?: string | null }; finish_reason?: string | null }[]; usage?: { completion_tokens: number } };
    const choice = chunk.choices[0];
    const content = choice?.delta?.content;
    if (typeof content === 'string') clock.chunk(content);
    if (typeof choice?.finish_reason === 'string') finish = choice.finish_reason;
    if (chunk.usage !== undefined) reported = chunk.usage.completion_tokens;
  }, () => {
    // A read counts when it carried text.
    if (clock.chunks > chunksBefore) clock.reads++;
    chunksBefore = clock.chunks;
  });
  if (reported < 0) throw new Error('stream ended without a usage chunk');
  return clock.sample(finish === 'length' ? maxTokens : reported, reported);
}

// ---- node-llama-cpp directly, the way its docs use it: one LlamaChat per context sequence,
// created once (its constructor resolves the chat wrapper from the GGUF's template, which
// costs hundreds of ms) and reused, so the evaluated prompt stays in the sequence.

interface Direct {
  /** Generation on sequence `index`. */
  generate(index: number, maxTokens: number): Promise<Sample>;
  /**
   * Median ms of resolveChatWrapper(model): what `new LlamaChat({contextSequence})` without a
   * chatWrapper runs in its constructor.
   */
  measureChatConstruction(times: number): number;
  dispose(): Promise<void>;
}

async function loadDirect(modelPath: string, threads: number): Promise<Direct> {
  const llama = await getLlama({ gpu: false, build: 'never', progressLogs: false, logLevel: LlamaLogLevel.error, maxThreads: threads });
  const model = await llama.loadModel({ modelPath });
  const context = await model.createContext({ contextSize: Math.min(model.trainContextSize, CONTEXT_CAP), sequences: SEQUENCES, threads });
  const sequences = Array.from({ length: SEQUENCES }, () => context.getSequence());
  const first = new LlamaChat({ contextSequence: sequences[0]!, autoDisposeSequence: false });
  const chats = [first, ...sequences.slice(1).map((contextSequence) => new LlamaChat({ contextSequence, autoDisposeSequence: false, chatWrapper: first.chatWrapper }))];
  return {
    async generate(index, maxTokens) {
      const chat = chats[index % SEQUENCES]!;
      const clock = new ChunkClock();
      let tokens = 0;
      await chat.generateResponse(HISTORY, {
        maxTokens,
        temperature: 0,
        onToken: (t) => { tokens += t.length; },
        onTextChunk: (text) => clock.chunk(text),
      });
      return clock.sample(tokens);
    },
    measureChatConstruction(times) {
      const ms: number[] = [];
      for (let i = 0; i < times; i++) {
        const start = performance.now();
        resolveChatWrapper(model);
        ms.push(performance.now() - start);
      }
      return median(ms);
    },
    async dispose() {
      for (const chat of chats) chat.dispose();
      await context.dispose();
      await model.dispose();
      await llama.dispose();
    },
  };
}

// ---- svc's own engine in this process, no HTTP: splits the API's overhead into what the
// engine layer adds (over node-llama-cpp) and what HTTP/SSE adds (over the engine).

async function loadEngine(modelPath: string, threads: number): Promise<{ generate(maxTokens: number): Promise<Sample>; close(): Promise<void> }> {
  const catalog = await ModelCatalog.load([{ id: 'bench', path: modelPath }]);
  const quiet = { info() {}, warn() {}, debug() {} };
  const engine = new LlamaEngine(catalog, { parallel: SEQUENCES, queueSize: 32, defaultMaxTokens: DEFAULT_MAX_TOKENS, keepAliveMs: Number.POSITIVE_INFINITY, gpu: 'cpu', threads, log: quiet });
  const model = engine.model('bench')!;
  return {
    async generate(maxTokens) {
      const clock = new ChunkClock();
      // The same options the chat route derives from {temperature: 0, max_tokens}.
      const result = await model.chat([{ role: 'user', content: PROMPT }], { ...samplingFrom({ temperature: 0 }, maxTokens), onPart: (part) => { if (part.type === 'text-delta') clock.chunk(part.text); } });
      return clock.sample(result.finishReason === 'length' ? maxTokens : result.usage.completionTokens, result.usage.completionTokens);
    },
    close: () => engine.close(),
  };
}

interface BatchResult {
  tokensPerSecond: number;
  tokens: number;
  wallMs: number;
  /** Each stream's time to first token, ascending. */
  ttftsMs: number[];
  /** The server process's CPU ms per generated token over the batch (HTTP sides). */
  cpuMsPerToken?: number | undefined;
  /** The same for its main thread alone. */
  mainThreadCpuMsPerToken?: number | undefined;
}

/**
 * Runs `n` generations at once; aggregate tokens/s over the wall time of the whole batch, and
 * the CPU time process `pid` spent meanwhile per token.
 */
async function batch(n: number, one: (i: number) => Promise<Sample>, pid?: number): Promise<BatchResult> {
  const cpuBefore = processCpuMs(pid);
  const mainBefore = mainThreadCpuMs(pid);
  const start = performance.now();
  const samples = await Promise.all(Array.from({ length: n }, (_, i) => one(i)));
  const wallMs = performance.now() - start;
  const cpuAfter = processCpuMs(pid);
  const mainAfter = mainThreadCpuMs(pid);
  const tokens = samples.reduce((t, s) => t + s.tokens, 0);
  return {
    tokensPerSecond: tokens / (wallMs / 1000), tokens, wallMs, ttftsMs: samples.map((s) => s.ttftMs).sort((a, b) => a - b),
    cpuMsPerToken: cpuBefore === undefined || cpuAfter === undefined ? undefined : (cpuAfter - cpuBefore) / tokens,
    mainThreadCpuMsPerToken: mainBefore === undefined || mainAfter === undefined ? undefined : (mainAfter - mainBefore) / tokens,
  };
}

/** Median CPU ms per token over batches (undefined where /proc could not be read). */
function cpuPerToken(rounds: readonly BatchResult[], key: 'cpuMsPerToken' | 'mainThreadCpuMsPerToken'): number | undefined {
  const xs = rounds.map((r) => r[key]).filter((x): x is number => x !== undefined);
  return xs.length === 0 ? undefined : median(xs);
}

/** Median per rank over rounds: the fastest stream's TTFT, the second's, … */
const ttftsByRank = (rounds: readonly BatchResult[]): number[] =>
  Array.from({ length: rounds[0]?.ttftsMs.length ?? 0 }, (_, rank) => median(rounds.map((r) => r.ttftsMs[rank]!)));

interface PeerResult {
  version: string;
  args: string[];
  decodeTps: number;
  ttftMs: number;
  /** svc API / llama-server, medians' ratio and median of per-round ratios. */
  decodeRatio: number;
  pairedDecodeRatio: number;
  ttftAddedMs: number;
  pairedTtftAddedMs: number;
  server1Tps: number;
  serverNTps: number;
  speedup: number;
  apiVsServerN: number;
  serverTtftsNMs: number[];
  /** llama-server's CPU ms per generated token, 1 and N streams. */
  cpuMsPerToken1: number | undefined;
  cpuMsPerTokenN: number | undefined;
  chunksPerToken: number;
  readsPerToken: number;
  sameTextAsApi: boolean;
}

interface ConfigResult {
  model: string;
  modelBytes: number;
  threads: number;
  maxTokens: number;
  loadAverageAtStart: number[];
  loadAverageAtEnd: number[];
  single: { api: Sample[]; direct: Sample[]; server: Sample[]; sameText: boolean };
  decode: { apiTps: number; directTps: number; ratio: number; pairedRatio: number };
  ttft: { apiMs: number; directMs: number; addedMs: number; pairedAddedMs: number };
  aggregate: { api1Tps: number; apiNTps: number; speedup: number; directNTps: number; apiVsDirectN: number; apiTtftsNMs: number[]; directTtftsNMs: number[] };
  /** svc's daemon: CPU ms per generated token, the whole process and its main thread, 1 and N streams. */
  cpu: { api1MsPerToken: number | undefined; apiNMsPerToken: number | undefined; api1MainMsPerToken: number | undefined; apiNMainMsPerToken: number | undefined };
  /** Busy-loop processes running beside the measurements (`--load`). */
  load: number;
  sse: { chunksPerToken: number; readsPerToken: number; reportedPerGenerated: number };
  peer: PeerResult | undefined;
  /** Where the API's overhead goes. */
  diagnostics: {
    /** svc's LlamaEngine called in this process: what the engine layer adds before HTTP does. */
    engineTps: number;
    engineTtftMs: number;
    engineNTps: number;
    addedMsPerToken: { engine: number; http: number };
    addedTtftMs: { engine: number; http: number };
    chatConstructionMs: number;
  };
}

async function runConfig(key: string, modelPath: string, threads: number, maxTokens: number, serverBinary: string | undefined): Promise<ConfigResult> {
  const loadAverageAtStart = loadavg();
  progress(`[${key}, ${threads} thread(s)] starting svc${serverBinary !== undefined ? ', llama-server' : ''} and loading the model directly…`);
  let daemon: DaemonProcess | undefined;
  let server: LlamaServerProcess | undefined;
  let direct: Direct | undefined;
  let engine: Awaited<ReturnType<typeof loadEngine>> | undefined;
  let loops: ReturnType<typeof startBusyLoops> = [];
  try {
    daemon = await startDaemon({
      withModel: false,
      args: ['--model', `bench=${modelPath}`, '--threads', String(threads), '--keep-alive', 'forever'],
      env: { SVC_THREADS: String(threads) },
    });
    if (serverBinary !== undefined) {
      server = await startLlamaServer(serverBinary, { model: modelPath, threads, slots: SEQUENCES, contextPerSlot: CONTEXT_CAP });
    }
    direct = await loadDirect(modelPath, threads);
    engine = await loadEngine(modelPath, threads);
    const api = (): Promise<Sample> => streamChat(daemon!.url, 'bench', maxTokens);
    const peer = (): Promise<Sample> => streamChat(server!.url, 'bench', maxTokens);
    const run = (i: number): Promise<Sample> => direct!.generate(i, maxTokens);

    // Warm-up: the daemon loads the model on its first request; every side evaluates the
    // prompt once on every sequence/slot, so what follows is warm.
    for (let i = 0; i < 2; i++) {
      await api();
      if (server !== undefined) await peer();
      await run(0);
      await engine.generate(maxTokens);
    }
    await batch(CONCURRENCY, () => api());
    if (server !== undefined) await batch(CONCURRENCY, () => peer());
    await batch(CONCURRENCY, run);
    if (LOAD > 0) {
      loops = startBusyLoops(LOAD);
      // Let the scheduler see the loops as busy before measuring.
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    const loadAverageLoaded = loadavg();

    // Phase 1: one stream at a time, the sides taking turns (and rotating which goes first)
    // so drift in the machine's load does not favour one side.
    const apiSamples: Sample[] = [];
    const serverSamples: Sample[] = [];
    const directSamples: Sample[] = [];
    const engineSamples: Sample[] = [];
    const sides = [
      async () => { apiSamples.push(await api()); },
      ...(server !== undefined ? [async () => { serverSamples.push(await peer()); }] : []),
      async () => { directSamples.push(await run(0)); },
      async () => { engineSamples.push(await engine!.generate(maxTokens)); },
    ];
    for (let r = 0; r < ROUNDS; r++) {
      for (let k = 0; k < sides.length; k++) await sides[(k + r) % sides.length]!();
      const peerNote = server !== undefined ? `, llama-server ${decodeRate(serverSamples.at(-1)!).toFixed(1)} t/s` : '';
      progress(`  round ${r + 1}/${ROUNDS}: decode api ${decodeRate(apiSamples.at(-1)!).toFixed(1)} t/s${peerNote}, engine ${decodeRate(engineSamples.at(-1)!).toFixed(1)} t/s, direct ${decodeRate(directSamples.at(-1)!).toFixed(1)} t/s`);
    }

    // Phase 2: aggregate throughput, 1 vs CONCURRENCY streams through both servers, and
    // CONCURRENCY streams directly and through the engine, in rotating order.
    const api1: BatchResult[] = [];
    const apiN: BatchResult[] = [];
    const server1: BatchResult[] = [];
    const serverN: BatchResult[] = [];
    const directN: BatchResult[] = [];
    const engineN: BatchResult[] = [];
    const steps = [
      async () => { engineN.push(await batch(CONCURRENCY, () => engine!.generate(maxTokens))); },
      async () => { api1.push(await batch(1, () => api(), daemon!.child.pid)); },
      async () => { apiN.push(await batch(CONCURRENCY, () => api(), daemon!.child.pid)); },
      ...(server !== undefined
        ? [async () => { server1.push(await batch(1, () => peer(), server!.pid)); }, async () => { serverN.push(await batch(CONCURRENCY, () => peer(), server!.pid)); }]
        : []),
      async () => { directN.push(await batch(CONCURRENCY, run)); },
    ];
    for (let r = 0; r < BATCH_ROUNDS; r++) {
      for (let k = 0; k < steps.length; k++) await steps[(k + r) % steps.length]!();
      const peerNote = server !== undefined ? `, llama-server 1 stream ${server1.at(-1)!.tokensPerSecond.toFixed(1)}, ${CONCURRENCY} streams ${serverN.at(-1)!.tokensPerSecond.toFixed(1)}` : '';
      progress(`  batch round ${r + 1}/${BATCH_ROUNDS}: api 1 stream ${api1.at(-1)!.tokensPerSecond.toFixed(1)} t/s, ${CONCURRENCY} streams ${apiN.at(-1)!.tokensPerSecond.toFixed(1)}${peerNote}, engine ${CONCURRENCY} streams ${engineN.at(-1)!.tokensPerSecond.toFixed(1)}, direct ${directN.at(-1)!.tokensPerSecond.toFixed(1)}`);
    }

    progress('  timing resolveChatWrapper(model)…');
    const chatConstructionMs = direct.measureChatConstruction(5);

    const tps = (xs: readonly BatchResult[]): number => median(xs.map((b) => b.tokensPerSecond));
    const apiTps = median(apiSamples.map(decodeRate));
    const directTps = median(directSamples.map(decodeRate));
    const apiTtft = median(apiSamples.map((s) => s.ttftMs));
    const directTtft = median(directSamples.map((s) => s.ttftMs));
    const engineTps = median(engineSamples.map(decodeRate));
    const engineTtft = median(engineSamples.map((s) => s.ttftMs));
    const a1 = tps(api1);
    const aN = tps(apiN);
    const dN = tps(directN);
    const perToken = (samples: readonly Sample[], count: (s: Sample) => number): number => median(samples.map((s) => count(s) / s.tokens));
    let peerResult: PeerResult | undefined;
    if (server !== undefined && serverBinary !== undefined) {
      const serverTps = median(serverSamples.map(decodeRate));
      const serverTtft = median(serverSamples.map((s) => s.ttftMs));
      const s1 = tps(server1);
      const sN = tps(serverN);
      peerResult = {
        version: llamaServerVersion(serverBinary),
        args: server.args,
        decodeTps: serverTps,
        ttftMs: serverTtft,
        decodeRatio: apiTps / serverTps,
        pairedDecodeRatio: median(apiSamples.map((s, i) => decodeRate(s) / decodeRate(serverSamples[i]!))),
        ttftAddedMs: apiTtft - serverTtft,
        pairedTtftAddedMs: median(apiSamples.map((s, i) => s.ttftMs - serverSamples[i]!.ttftMs)),
        server1Tps: s1,
        serverNTps: sN,
        speedup: sN / s1,
        apiVsServerN: aN / sN,
        serverTtftsNMs: ttftsByRank(serverN),
        cpuMsPerToken1: cpuPerToken(server1, 'cpuMsPerToken'),
        cpuMsPerTokenN: cpuPerToken(serverN, 'cpuMsPerToken'),
        chunksPerToken: perToken(serverSamples, (s) => s.chunks),
        readsPerToken: perToken(serverSamples, (s) => s.reads),
        sameTextAsApi: serverSamples.every((s, i) => s.text === apiSamples[i]?.text),
      };
    }
    return {
      model: key,
      modelBytes: statSync(modelPath).size,
      threads,
      maxTokens,
      loadAverageAtStart: LOAD > 0 ? loadAverageLoaded : loadAverageAtStart,
      loadAverageAtEnd: loadavg(),
      load: LOAD,
      cpu: {
        api1MsPerToken: cpuPerToken(api1, 'cpuMsPerToken'),
        apiNMsPerToken: cpuPerToken(apiN, 'cpuMsPerToken'),
        api1MainMsPerToken: cpuPerToken(api1, 'mainThreadCpuMsPerToken'),
        apiNMainMsPerToken: cpuPerToken(apiN, 'mainThreadCpuMsPerToken'),
      },
      single: {
        api: apiSamples,
        direct: directSamples,
        server: serverSamples,
        sameText: apiSamples.every((s, i) => s.text === directSamples[i]?.text && s.text === engineSamples[i]?.text),
      },
      decode: {
        apiTps,
        directTps,
        ratio: apiTps / directTps,
        pairedRatio: median(apiSamples.map((s, i) => decodeRate(s) / decodeRate(directSamples[i]!))),
      },
      ttft: {
        apiMs: apiTtft,
        directMs: directTtft,
        addedMs: apiTtft - directTtft,
        pairedAddedMs: median(apiSamples.map((s, i) => s.ttftMs - directSamples[i]!.ttftMs)),
      },
      aggregate: { api1Tps: a1, apiNTps: aN, speedup: aN / a1, directNTps: dN, apiVsDirectN: aN / dN, apiTtftsNMs: ttftsByRank(apiN), directTtftsNMs: ttftsByRank(directN) },
      sse: {
        chunksPerToken: perToken(apiSamples, (s) => s.chunks),
        readsPerToken: perToken(apiSamples, (s) => s.reads),
        reportedPerGenerated: median(apiSamples.map((s) => s.reportedTokens / s.tokens)),
      },
      peer: peerResult,
      diagnostics: {
        engineTps,
        engineTtftMs: engineTtft,
        engineNTps: tps(engineN),
        addedMsPerToken: { engine: 1000 / engineTps - 1000 / directTps, http: 1000 / apiTps - 1000 / engineTps },
        addedTtftMs: { engine: engineTtft - directTtft, http: apiTtft - engineTtft },
        chatConstructionMs,
      },
    };
  } catch (error) {
    if (daemon !== undefined) progress(`daemon log tail:\n${daemon.logs.slice(-5).map((l) => JSON.stringify(l)).join('\n')}\n${daemon.stderr()}`);
    throw error;
  } finally {
    await stopBusyLoops(loops);
    await daemon?.stop();
    await server?.stop();
    await direct?.dispose();
    await engine?.close();
  }
}

if (flags.scenario === 'threads') {
  const rounds = process.argv.includes('--rounds') ? ROUNDS : 5;
  const models = flags.models.split(',').map((key) => {
    const m = MODELS[key];
    if (m === undefined) throw new Error(`--models: unknown model '${key}' (tiny, big, cycle)`);
    return { key, path: m.path() };
  });
  const results = await runThreadsScenario({ models, rounds, maxTokens: MAX_TOKENS ?? 16, timeoutMs: 60_000, log, progress });
  if (flags.json) console.log(JSON.stringify({ loadAverage: loadavg(), results }, null, 2));
  agent.destroy();
  process.exit(0);
} else if (flags.scenario === 'speculative') {
  const rounds = process.argv.includes('--rounds') ? ROUNDS : 3;
  const models = flags.models.split(',').map((key) => {
    const m = MODELS[key];
    if (m === undefined) throw new Error(`--models: unknown model '${key}' (tiny, big, cycle)`);
    return { key, path: m.path(), draftPath: m.draftPath() };
  });
  const loadAverageAtStart = loadavg();
  const { results, direct } = await runSpeculativeScenario({ models, rounds, maxTokens: MAX_TOKENS ?? 64, threads: THREADS[0] ?? 1, log, progress });
  log(`\n# load average ${loadAverageAtStart.map((x) => x.toFixed(2)).join(' ')} at start, ${loadavg().map((x) => x.toFixed(2)).join(' ')} at end`);
  if (flags.json) console.log(JSON.stringify({ loadAverageAtStart, loadAverage: loadavg(), results, direct }, null, 2));
  agent.destroy();
  process.exit(0);
} else if (flags.scenario !== 'overhead') {
  throw new Error(`--scenario: unknown scenario '${flags.scenario}' (overhead, threads, speculative)`);
}

const started = performance.now();
const machine = {
  cpu: cpus()[0]?.model ?? 'unknown',
  cores: availableParallelism(),
  node: process.version,
  loadAverage: loadavg(),
};
const selected = flags.models.split(',').map((k) => {
  const m = Object.hasOwn(MODELS, k) ? MODELS[k] : undefined;
  if (m === undefined) throw new Error(`--models: unknown model '${k}' (tiny, big, cycle)`);
  return { key: k, ...m };
});
// Read before anything else loads the binding: the backend load is logged once per process.
const cpuVariant = await nodeLlamaCppCpuVariant();
const server = flags['llama-server'] ? await ensureLlamaServer(cpuVariant, progress) : undefined;
const serverBinary = server?.binary;
const results: ConfigResult[] = [];
for (const m of selected) {
  const path = m.path();
  // The tiny model is HTTP-bound at ~0.5 ms/token: one thread setting is enough for it.
  for (const threads of m.key === 'tiny' ? THREADS.slice(0, 1) : THREADS) {
    results.push(await runConfig(m.key, path, threads, MAX_TOKENS ?? m.maxTokens, serverBinary));
  }
}
agent.destroy();

const pct = (x: number): string => `${(x * 100).toFixed(1)}%`;
const f1 = (x: number): string => x.toFixed(1);
const f2 = (x: number): string => x.toFixed(2);
const ms = (xs: readonly number[]): string => xs.map(f1).join(' / ');
const load = (r: ConfigResult): string => `${f2(r.loadAverageAtStart[0]!)}→${f2(r.loadAverageAtEnd[0]!)}`;
const mb = (bytes: number): string => `${(bytes / 1e6).toFixed(1)} MB`;
log(`# svc inference bench — ${machine.cpu} × ${machine.cores}, Node ${machine.node}, load average ${machine.loadAverage.map(f2).join(' ')}`);
log(`# greedy (temperature 0), medians of ${ROUNDS} interleaved single-stream rounds and ${BATCH_ROUNDS} batch rounds, ${SEQUENCES} sequences per context`);
log(`# node-llama-cpp's CPU backend: ${cpuVariant ?? 'not a variant build'}`);
if (LOAD > 0) log(`# loaded: ${LOAD} busy-loop process(es) beside the bench while it measured (load avg columns: after they started → at the end)`);
if (server !== undefined) log(`# llama-server: ${results.find((r) => r.peer !== undefined)?.peer?.version ?? '?'} (${server.binary}; ${server.flags.filter((f) => f.startsWith('-DGGML_') && f.endsWith('=ON')).join(' ')})`);
log('');
for (const m of selected) log(`- ${m.key}: ${m.label}, ${mb(results.find((r) => r.model === m.key)?.modelBytes ?? 0)}, max_tokens ${MAX_TOKENS ?? m.maxTokens}`);
log('');
if (serverBinary !== undefined) {
  log('Against llama-server (same model, threads, 4 slots × 4096, same HTTP client):');
  log('');
  log(`| model | threads | load avg | decode t/s svc | llama-server | svc/llama-server (goal ≥ 1.0) | TTFT ms svc | llama-server | TTFT added (goal ≤ 1 ms) | ${CONCURRENCY} streams t/s svc | llama-server | svc/llama-server (goal ≥ 0.95) | ${CONCURRENCY}-stream speedup svc / llama-server |`);
  log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const r of results) {
    const p = r.peer;
    if (p === undefined) continue;
    log(`| ${r.model} | ${r.threads} | ${load(r)} | ${f1(r.decode.apiTps)} | ${f1(p.decodeTps)} | ${f2(p.decodeRatio)}× (paired ${f2(p.pairedDecodeRatio)}) | ${f1(r.ttft.apiMs)} | ${f1(p.ttftMs)} | ${f1(p.ttftAddedMs)} (paired ${f1(p.pairedTtftAddedMs)}) | ${f1(r.aggregate.apiNTps)} | ${f1(p.serverNTps)} | ${f2(p.apiVsServerN)}× | ${f2(r.aggregate.speedup)}× / ${f2(p.speedup)}× |`);
  }
  log('');
  log(`| model | threads | TTFT ms of the ${CONCURRENCY} concurrent streams, svc | llama-server | direct | content events per token svc / llama-server | socket reads per token svc / llama-server | svc usage / generated tokens | same text svc & llama-server |`);
  log('|---|---:|---|---|---|---|---|---:|---|');
  for (const r of results) {
    const p = r.peer;
    if (p === undefined) continue;
    log(`| ${r.model} | ${r.threads} | ${ms(r.aggregate.apiTtftsNMs)} | ${ms(p.serverTtftsNMs)} | ${ms(r.aggregate.directTtftsNMs)} | ${f2(r.sse.chunksPerToken)} / ${f2(p.chunksPerToken)} | ${f2(r.sse.readsPerToken)} / ${f2(p.readsPerToken)} | ${f2(r.sse.reportedPerGenerated)} | ${p.sameTextAsApi ? 'yes' : 'no'} |`);
  }
  log('');
  log('CPU ms per generated token (user + system, /proc, medians over the batch rounds):');
  log('');
  log(`| model | threads | busy loops | svc daemon, 1 stream | its main thread | llama-server, 1 stream | svc daemon, ${CONCURRENCY} streams | its main thread | llama-server, ${CONCURRENCY} streams |`);
  log('|---|---:|---:|---:|---:|---:|---:|---:|---:|');
  const cms = (x: number | undefined): string => x === undefined ? '—' : x.toFixed(2);
  for (const r of results) {
    const p = r.peer;
    if (p === undefined) continue;
    log(`| ${r.model} | ${r.threads} | ${r.load} | ${cms(r.cpu.api1MsPerToken)} | ${cms(r.cpu.api1MainMsPerToken)} | ${cms(p.cpuMsPerToken1)} | ${cms(r.cpu.apiNMsPerToken)} | ${cms(r.cpu.apiNMainMsPerToken)} | ${cms(p.cpuMsPerTokenN)} |`);
  }
  log('');
}
log('Against node-llama-cpp called directly:');
log('');
log('| model | threads | load avg | decode t/s API | decode t/s direct | API/direct (goal ≥ 97%) | TTFT ms API | TTFT ms direct | added ms (goal ≤ 5) | same text |');
log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---|');
for (const r of results) {
  log(`| ${r.model} | ${r.threads} | ${load(r)} | ${f1(r.decode.apiTps)} | ${f1(r.decode.directTps)} | ${pct(r.decode.ratio)} (paired ${pct(r.decode.pairedRatio)}) | ${f1(r.ttft.apiMs)} | ${f1(r.ttft.directMs)} | ${f1(r.ttft.addedMs)} (paired ${f1(r.ttft.pairedAddedMs)}) | ${r.single.sameText ? 'yes' : 'NO'} |`);
}
log('');
log(`| model | threads | aggregate t/s API, 1 stream | API, ${CONCURRENCY} streams | speedup | direct, ${CONCURRENCY} streams | API/direct at ${CONCURRENCY} |`);
log('|---|---:|---:|---:|---:|---:|---:|');
for (const r of results) {
  log(`| ${r.model} | ${r.threads} | ${f1(r.aggregate.api1Tps)} | ${f1(r.aggregate.apiNTps)} | ${f2(r.aggregate.speedup)}× | ${f1(r.aggregate.directNTps)} | ${pct(r.aggregate.apiVsDirectN)} |`);
}
log('');
log('Where the overhead goes: svc\'s LlamaEngine called in-process (no HTTP) splits it into the engine layer and HTTP/SSE.');
log('');
log(`| model | threads | engine decode t/s | engine TTFT ms | TTFT added: engine / HTTP ms | ms per token added: engine / HTTP | engine aggregate t/s, ${CONCURRENCY} streams | resolveChatWrapper ms (run by every \`new LlamaChat()\` without chatWrapper) |`);
log('|---|---:|---:|---:|---:|---:|---:|---:|');
for (const r of results) {
  const d = r.diagnostics;
  log(`| ${r.model} | ${r.threads} | ${f1(d.engineTps)} | ${f1(d.engineTtftMs)} | ${f1(d.addedTtftMs.engine)} / ${f1(d.addedTtftMs.http)} | ${d.addedMsPerToken.engine.toFixed(3)} / ${d.addedMsPerToken.http.toFixed(3)} | ${f1(d.engineNTps)} | ${f1(d.chatConstructionMs)} |`);
}
log('');
log(`# ${((performance.now() - started) / 1000).toFixed(0)} s, load average at end ${loadavg().map(f2).join(' ')}`);
if (flags.json) {
  const strip = (s: Sample) => ({ ttftMs: s.ttftMs, decodeMs: s.decodeMs, totalMs: s.totalMs, tokens: s.tokens, reportedTokens: s.reportedTokens, chunks: s.chunks, reads: s.reads });
  console.log(JSON.stringify({
    machine,
    nodeLlamaCppCpuVariant: cpuVariant ?? null,
    llamaServer: server === undefined ? null : { binary: server.binary, cmakeFlags: server.flags },
    parameters: { temperature: 0, rounds: ROUNDS, batchRounds: BATCH_ROUNDS, sequences: SEQUENCES, concurrency: CONCURRENCY, load: LOAD, prompt: PROMPT },
    results: results.map((r) => ({ ...r, single: { sameText: r.single.sameText, api: r.single.api.map(strip), direct: r.single.direct.map(strip), server: r.single.server.map(strip) } })),
    loadAverageAtEnd: loadavg(),
  }, null, 2));
}
