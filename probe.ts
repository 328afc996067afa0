import { request, Agent, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startDaemon } from './test/helpers/daemon-process.ts';
const events = [...Array.from({ length: 32 }, (_, i) => ({ choices: [{ index: 0, delta: { content: ` w${i}` }, finish_reason: null }] })), { choices: [{ index: 0, delta: {}, finish_reason: 'length' }] }].map((e) => `data: ${JSON.stringify(e)}\n\n`);
const server = createServer((req, res) => { req.resume(); req.on('end', () => { if (req.url === '/v1/models') { res.end(JSON.stringify({ data: [{ id: 'mock' }] })); return; } res.writeHead(200, { 'content-type': 'text/event-stream' }); for (const e of events) res.write(e); res.end('data: [DONE]\n\n'); }); });
await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
const mock = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
const front = await startDaemon({ withModel: false, args: ['--upstream', `mock=${mock}`, '--log-level', process.env.LL ?? 'info'], env: process.env.PROF ? { NODE_OPTIONS: '--cpu-prof --cpu-prof-dir=/tmp/svcprof' } : {} });
const agent = new Agent({ keepAlive: true });
function one(url: string, body: string): Promise<number> {
  return new Promise((resolve, reject) => { const t = performance.now(); let first = 0; const req = request(url, { method: 'POST', agent, headers: { 'content-type': 'application/json' } }, (res) => { res.on('data', () => { if (!first) first = performance.now() - t; }); res.on('end', () => resolve(first)); }); req.on('error', reject); req.end(body); });
}
const body = (model: string, stream = true) => JSON.stringify({ model, messages: [{ role: 'user', content: 'x' }], max_tokens: 32, temperature: 0, stream });
const med = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
for (let i = 0; i < 50; i++) { await one(`${front.url}/v1/chat/completions`, body('mock/mock')); }
const a: number[] = [], b: number[] = [], c: number[] = [], h: number[] = [];
for (let i = 0; i < 300; i++) {
  a.push(await one(`${mock}/chat/completions`, body('mock')));
  b.push(await one(`${front.url}/v1/chat/completions`, body('mock/mock')));
  c.push(await one(`${front.url}/v1/chat/completions`, body('nope')));
  h.push(await one(`${front.url}/v1/embeddings`, JSON.stringify({ model: 'nope', input: 'x' })));
}
console.log('direct', med(a).toFixed(3), 'via', med(b).toFixed(3), '404 chat', med(c).toFixed(3), '404 emb', med(h).toFixed(3));
agent.destroy(); await front.stop(); server.close();
