/**
 * The least a gateway can do, as a reference for bench/hosted-gateway.ts: one Fastify route that
 * parses the chat request, forwards it (with its Authorization header) to the upstream over an
 * undici keep-alive pool and returns the parsed JSON answer with the upstream's status. No key
 * check, no limiter, no route plan, no metering, no ledger, no logging.
 *
 * Whatever this adds over calling the upstream directly is the cost of one more HTTP hop through
 * Node on the machine that runs the bench (its cores shared with the load generator and the mock),
 * so it is the floor under any gateway's "added" figures there.
 *
 * Usage: node bench/floor-proxy.ts <upstream origin> <port>
 */
import Fastify from 'fastify';
import { Pool } from 'undici';

const [upstream, port] = [process.argv[2], Number(process.argv[3])];
if (upstream === undefined || !Number.isInteger(port)) throw new Error('usage: node bench/floor-proxy.ts <upstream origin> <port>');

const pool = new Pool(upstream, { connections: 256 });
const app = Fastify({ logger: false });
app.post('/v1/chat/completions', async (request, reply) => {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (request.headers.authorization !== undefined) headers.authorization = request.headers.authorization;
  const answer = await pool.request({ path: '/v1/chat/completions', method: 'POST', headers, body: JSON.stringify(request.body) });
  reply.code(answer.statusCode);
  return await answer.body.json();
});
await app.listen({ port, host: '127.0.0.1' });
