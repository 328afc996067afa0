import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { seededRng } from '../../src/quantum/simulator/rng.ts';
import { sampleIsaQasm } from './isa-qasm-simulator.ts';

/**
 * A local HTTP server that speaks the IBM Quantum Runtime job API as the hardware client uses it
 * (POST /jobs, GET /jobs/{id}, GET /jobs/{id}/results, POST /jobs/{id}/cancel under /api/v1) and
 * runs each submitted OpenQASM 3 program on svc's own simulator (isa-qasm-simulator.ts), so a
 * hardware solve makes a real round trip: transpile → HTTP → parse → simulate → samples → decode.
 *
 * `behaviour` decides what the next jobs do: complete after `pollsBeforeDone` Queued/Running
 * answers, fail with a reason, stay queued forever, or answer samples as `counts` instead.
 */
export interface MockJob {
  id: string;
  backend: string;
  qasm: string;
  shots: number;
  polls: number;
  status: string;
  created: number;
  finished?: number;
}

export interface MockProviderOptions {
  token: string;
  pollsBeforeDone?: number;
  behaviour?: 'complete' | 'fail' | 'never' | 'counts';
  seed?: number;
  /** Jobs (by id, e.g. job-2) that fail whatever `behaviour` says. */
  failJobs?: readonly string[];
  /** The status a failing job reports (default `Failed`), e.g. IBM's `Cancelled - Ran too long`. */
  failStatus?: string;
  /** The reason a failing job reports. */
  failReason?: string;
  /** The first this-many status GETs answer HTTP 503 (a provider hiccup). */
  flakyStatusGets?: number;
  /** Every status GET answers this HTTP status (a request the client must not retry). */
  statusHttpError?: number;
  /** Answers `POST /jobs` this long after creating the job (a slow provider). */
  createDelayMs?: number;
  /** Rewrites each measured register value before answering: a provider that returns wrong counts. */
  mapValue?: (value: number) => number;
  /**
   * Replaces the results body of a completed job: given the honest one (samples or counts, as
   * `behaviour` says), returns what to answer instead; a string is sent as is (not JSON-encoded).
   */
  resultsBody?: (honest: MockResultsBody, job: MockJob) => unknown;
}

/** A Sampler V2 results body as this server writes it. */
export interface MockResultsBody {
  results: { data: { c: { samples?: string[]; counts?: Record<string, number>; num_bits: number } }; metadata: unknown }[];
  metadata: unknown;
}

export interface MockProvider {
  /** The job API base, e.g. http://127.0.0.1:PORT/api/v1. */
  url: string;
  jobs: MockJob[];
  /** Authorization headers seen, in order. */
  authorizations: string[];
  cancelled: string[];
  options: MockProviderOptions;
  close(): Promise<void>;
}

export async function startMockQuantumProvider(options: MockProviderOptions): Promise<MockProvider> {
  const jobs: MockJob[] = [];
  const authorizations: string[] = [];
  const cancelled: string[] = [];
  let rngSeed = options.seed ?? 1;
  const send = (res: ServerResponse, status: number, body: unknown): void => {
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  };
  const readBody = async (req: IncomingMessage): Promise<string> => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString('utf8');
  };
  const server = createServer((req, res) => {
    void (async () => {
      authorizations.push(req.headers.authorization ?? '');
      if (req.headers.authorization !== `Bearer ${options.token}`) return send(res, 401, { errors: [{ message: 'Invalid or expired token', code: 1001 }] });
      const url = new URL(req.url ?? '/', 'http://x');
      const path = url.pathname.replace(/^\/api\/v1/, '');
      if (req.method === 'POST' && path === '/jobs') {
        const body = JSON.parse(await readBody(req)) as { program_id?: string; backend?: string; params?: { pubs?: unknown[][]; version?: number } };
        const pub = body.params?.pubs?.[0];
        if (body.program_id !== 'sampler' || typeof body.backend !== 'string' || body.params?.version !== 2 || !Array.isArray(pub) || typeof pub[0] !== 'string' || typeof pub[2] !== 'number') {
          return send(res, 400, { errors: [{ message: 'Invalid job parameters', code: 1200 }] });
        }
        const job: MockJob = { id: `job-${jobs.length + 1}`, backend: body.backend, qasm: pub[0], shots: pub[2], polls: 0, status: 'Queued', created: Date.now() };
        jobs.push(job);
        // The job exists from here on, whether or not the client waits for this answer.
        if (options.createDelayMs !== undefined) await new Promise((r) => setTimeout(r, options.createDelayMs));
        return send(res, 200, { id: job.id, backend: job.backend });
      }
      const match = /^\/jobs\/([^/]+)(\/results|\/cancel)?$/.exec(path);
      const job = match === null ? undefined : jobs.find((j) => j.id === decodeURIComponent(match[1]!));
      if (job === undefined) return send(res, 404, { errors: [{ message: 'Job not found', code: 1291 }] });
      if (req.method === 'POST' && match![2] === '/cancel') {
        job.status = 'Cancelled';
        cancelled.push(job.id);
        return void res.writeHead(204).end();
      }
      if (req.method === 'GET' && match![2] === undefined) {
        if (options.statusHttpError !== undefined) return send(res, options.statusHttpError, { errors: [{ message: 'Bad request', code: 1000 }] });
        if ((options.flakyStatusGets ?? 0) > 0) {
          options.flakyStatusGets!--;
          return send(res, 503, { errors: [{ message: 'Service temporarily unavailable' }] });
        }
        const behaviour = options.behaviour ?? 'complete';
        if (job.status === 'Queued' || job.status === 'Running') {
          job.polls++;
          if (behaviour !== 'never' && job.polls > (options.pollsBeforeDone ?? 1)) {
            job.status = behaviour === 'fail' || options.failJobs?.includes(job.id) === true ? (options.failStatus ?? 'Failed') : 'Completed';
            job.finished = Date.now();
          } else if (behaviour !== 'never' && job.polls > 0) job.status = 'Running';
        }
        const reason = job.status === (options.failStatus ?? 'Failed') ? (options.failReason ?? 'Error running job: qubit 3 is not operational') : '';
        return send(res, 200, { id: job.id, backend: job.backend, status: job.status, state: { status: job.status, reason } });
      }
      if (req.method === 'GET' && match![2] === '/results') {
        if (job.status !== 'Completed') return send(res, 409, { errors: [{ message: 'Job not completed', code: 1300 }] });
        const sampled = sampleIsaQasm(job.qasm, job.shots, seededRng(rngSeed++));
        const counts = new Map<number, number>();
        for (const [v, n] of sampled) {
          const mapped = options.mapValue?.(v) ?? v;
          counts.set(mapped, (counts.get(mapped) ?? 0) + n);
        }
        const bits = /bit\[(\d+)\] c;/.exec(job.qasm)![1]!;
        const hex = (v: number): string => `0x${v.toString(16)}`;
        const register = options.behaviour === 'counts'
          ? { counts: Object.fromEntries([...counts].map(([v, n]) => [hex(v), n])), num_bits: Number(bits) }
          : { samples: [...counts].flatMap(([v, n]) => Array<string>(n).fill(hex(v))), num_bits: Number(bits) };
        const honest: MockResultsBody = { results: [{ data: { c: register }, metadata: { circuit_metadata: {} } }], metadata: { version: 2 } };
        const body = options.resultsBody === undefined ? honest : options.resultsBody(honest, job);
        if (typeof body === 'string') return void res.writeHead(200, { 'content-type': 'application/json' }).end(body);
        return send(res, 200, body);
      }
      return send(res, 404, { errors: [{ message: 'Not found' }] });
    })().catch((error: unknown) => send(res, 500, { errors: [{ message: String(error) }] }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/api/v1`, jobs, authorizations, cancelled, options,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
