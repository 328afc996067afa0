/**
 * What svc adds in front of an upstream: the same streamed chat request sent to an upstream
 * directly and through `svc serve --upstream`, side by side, taking turns within every round
 * (the order alternates), on two kinds of upstream:
 *
 *  1. real: a second `svc serve` with the test fixture model (greedy, so every round streams
 *     the same tokens; the bench checks the deltas are identical both ways);
 *  2. mock: a scripted SSE server in this process that answers at once with N content chunks,
 *     so the model's own time does not hide svc's cost.
 *
 * Per round: time to first content chunk (TTFT) and to the end of the stream, through svc
 * minus direct; reported as p50/p90 of those differences, beside the direct figures.
 *
 * Usage: npm run bench:upstream [-- --rounds 200 --max-tokens 32 --chunks 32 --json]
 */
import { createServer, Agent } from 'node:http';
import { postSse } from './sse-post.ts';
import type { AddressInfo } from 'node:net';
import { availableParallelism, cpus, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { startDaemon, type DaemonProcess } from '../test/helpers/daemon-process.ts';

const { values: flags } = parseArgs({
  options: {
    rounds: { type: 'string', default: '200' },
    warmup: { type: 'string', default: '20' },
    'max-tokens': { type: 'string', default: '32' },
    chunks: { type: 'string', default: '32' },
    json: { type: 'boolean', default: false },
  },
});
const ROUNDS = Number(flags.rounds);
const WARMUP = Number(flags.warmup);
const MAX_TOKENS = Number(flags['max-tokens']);
const CHUNKS = Number(flags.chunks);
const PROMPT = 'Write a long story about a fast local runtime.';

const log = (line: string): void => { if (!flags.json) console.log(line); };
const progress = (line: string): void => { process.stderr.write(`${line}\n`); };

interface Sample {
  ttftMs: number;
  totalMs: number;
  deltas: string[];
}

const agent = new Agent({ keepAlive: true, maxSockets: 4 });

/** One streamed chat over node:http with keep-alive (the lightest client). */
async function streamChat(baseUrl: string, model: string): Promise<Sample> {
  const body = JSON.stringify({ model, messages: [{ role: 'user', content: PROMPT }], max_tokens: MAX_TOKENS, temperature: 0, stream: true, stream_options: { include_usage: true } });
  const started = performance.now();
  let first = 0;
  const deltas: string[] = [];
  await postSse(`${baseUrl}/chat/completions`, body, agent, (data) => {
    const chunk = data as { choices: { delta?: { content?: string } }[]; error?: unknown };
    if (chunk.error !== undefined) throw new Error(`error event: ${JSON.stringify(chunk.error)}`);
    const content = chunk.choices[0]?.delta?.content;
    if (content !== undefined && content !== '') {
      if (deltas.length === 0) first = performance.now();
      deltas.push(content);
    }
  });
  return { ttftMs: first - started, totalMs: performance.now() - started, deltas };
}

function quantile(xs: readonly number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  const i = Math.min(s.length - 1, Math.max(0, Math.round(q * (s.length - 1))));
  return s[i]!;
}

interface Comparison {
  upstream: string;
  rounds: number;
  identical: number;
  direct: { ttftP50: number; totalP50: number };
  through: { ttftP50: number; totalP50: number };
  addedTtft: { p50: number; p90: number };
  addedTotal: { p50: number; p90: number };
}

async function compare(label: string, direct: () => Promise<Sample>, through: () => Promise<Sample>): Promise<Comparison> {
  for (let i = 0; i < WARMUP; i++) {
    await direct();
    await through();
  }
  const addedTtft: number[] = [];
  const addedTotal: number[] = [];
  const d: Sample[] = [];
  const t: Sample[] = [];
  let identical = 0;
  for (let round = 0; round < ROUNDS; round++) {
    // Alternate who goes first, so neither side always meets a warmer cache or a calmer CPU.
    let a: Sample;
    let b: Sample;
    if (round % 2 === 0) {
      a = await direct();
      b = await through();
    } else {
      b = await through();
      a = await direct();
    }
    d.push(a);
    t.push(b);
    addedTtft.push(b.ttftMs - a.ttftMs);
    addedTotal.push(b.totalMs - a.totalMs);
    if (JSON.stringify(a.deltas) === JSON.stringify(b.deltas)) identical++;
  }
  const result: Comparison = {
    upstream: label,
    rounds: ROUNDS,
    identical,
    direct: { ttftP50: quantile(d.map((s) => s.ttftMs), 0.5), totalP50: quantile(d.map((s) => s.totalMs), 0.5) },
    through: { ttftP50: quantile(t.map((s) => s.ttftMs), 0.5), totalP50: quantile(t.map((s) => s.totalMs), 0.5) },
    addedTtft: { p50: quantile(addedTtft, 0.5), p90: quantile(addedTtft, 0.9) },
    addedTotal: { p50: quantile(addedTotal, 0.5), p90: quantile(addedTotal, 0.9) },
  };
  const f = (x: number) => x.toFixed(2);
  log(`| ${label} | ${result.identical}/${ROUNDS} | ${f(result.direct.ttftP50)} | ${f(result.through.ttftP50)} | **${f(result.addedTtft.p50)}** / ${f(result.addedTtft.p90)} | ${f(result.direct.totalP50)} | ${f(result.through.totalP50)} | **${f(result.addedTotal.p50)}** / ${f(result.addedTotal.p90)} |`);
  return result;
}

/** The mock upstream: answers every chat at once with CHUNKS one-word deltas, a finish and usage. */
async function startMock(): Promise<{ url: string; close: () => Promise<void> }> {
  const events = [
    ...Array.from({ length: CHUNKS }, (_, i) => ({ id: 'chatcmpl-mock', object: 'chat.completion.chunk', created: 1, model: 'mock', choices: [{ index: 0, delta: { content: ` w${i}` }, finish_reason: null }] })),
    { id: 'chatcmpl-mock', object: 'chat.completion.chunk', created: 1, model: 'mock', choices: [{ index: 0, delta: {}, finish_reason: 'length' }] },
    { id: 'chatcmpl-mock', object: 'chat.completion.chunk', created: 1, model: 'mock', choices: [], usage: { prompt_tokens: 10, completion_tokens: CHUNKS, total_tokens: 10 + CHUNKS } },
  ].map((e) => `data: ${JSON.stringify(e)}\n\n`);
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (req.url === '/v1/models') {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ object: 'list', data: [{ id: 'mock', object: 'model', created: 1, owned_by: 'mock' }] }));
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      // One write per event, as a streaming server writes tokens as they come.
      for (const event of events) res.write(event);
      res.end('data: [DONE]\n\n');
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}

const daemons: DaemonProcess[] = [];
try {
  progress('starting the upstream svc (fixture model), the mock, and svc in front of both…');
  const upstream = await startDaemon({ args: ['--threads', '1'] });
  daemons.push(upstream);
  const mock = await startMock();
  const front = await startDaemon({ withModel: false, args: ['--upstream', `up=${upstream.url}/v1`, '--upstream', `mock=${mock.url}`] });
  daemons.push(front);

  log(`Machine: ${cpus()[0]?.model ?? 'unknown CPU'}, ${availableParallelism()} cores, load ${loadavg().map((l) => l.toFixed(2)).join(' ')}; Node ${process.version}`);
  log(`${ROUNDS} rounds after ${WARMUP} warm-up rounds; chat streamed, temperature 0, max_tokens ${MAX_TOKENS} (fixture) / ${CHUNKS} chunks (mock). Times in ms.`);
  log('');
  log('| upstream | identical deltas | direct TTFT p50 | via svc TTFT p50 | added TTFT p50 / p90 | direct total p50 | via svc total p50 | added total p50 / p90 |');
  log('|---|---|---|---|---|---|---|---|');
  const results = [
    await compare('svc + fixture model', () => streamChat(`${upstream.url}/v1`, 'tiny'), () => streamChat(`${front.url}/v1`, 'up/tiny')),
    await compare(`mock (${CHUNKS} chunks at once)`, () => streamChat(mock.url, 'mock'), () => streamChat(`${front.url}/v1`, 'mock/mock')),
  ];
  if (flags.json) console.log(JSON.stringify({ rounds: ROUNDS, maxTokens: MAX_TOKENS, chunks: CHUNKS, results }, null, 2));
  await mock.close();
} finally {
  agent.destroy();
  await Promise.all(daemons.map((d) => d.stop()));
}
