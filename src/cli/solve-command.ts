import { readFile } from 'node:fs/promises';
import { InvalidArgumentError, type Command } from 'commander';
import { ApiError } from '../shared/api-error.ts';
import type { BatchResponse, SolveResponse } from '../quantum/solve-schemas.ts';
import { SolveService } from '../quantum/solve-service.ts';

/**
 * `svc solve FILE.json`: sends a solve request (`{solver, problem, ...}`) or, with `--batch` or a
 * `problems` array in the file, a batch request to the running daemon, or solves it in this
 * process with `--local`. Prints a readable summary, or the response JSON with `--json`.
 * Exit codes: 0 solved, 1 the request was refused or failed (or, in a batch, any problem failed:
 * the others are still printed), 2 the file could not be used.
 */
export interface SolveCommandOptions {
  batch?: boolean;
  local?: boolean;
  json?: boolean;
  url: string;
  seed?: number;
  shots?: number;
}

export interface SolveIo {
  out: (text: string) => void;
  err: (text: string) => void;
  readInput: (file: string) => Promise<string>;
}

const defaultIo: SolveIo = {
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
  readInput: async (file) => (file === '-' ? readStdin() : readFile(file, 'utf8')),
};

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

const integer = (name: string) => (value: string): number => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError(`${name} must be a non-negative integer.`);
  return n;
};

export function registerSolveCommand(program: Command): void {
  program
    .command('solve')
    .description('solve a quantum solver problem from a JSON file (a running daemon, or --local)')
    .argument('<file>', 'request JSON: {"solver", "problem"} or {"solver", "problems": [...]}; "-" reads stdin')
    .option('--batch', 'send to /api/solve/batch (implied when the file has "problems")')
    .option('--local', 'solve in this process instead of on the daemon')
    .option('--json', 'print the response JSON')
    .option('--url <url>', 'daemon address', process.env['SVC_URL'] ?? 'http://127.0.0.1:11435')
    .option('--seed <n>', 'make sampling reproducible', integer('--seed'))
    .option('--shots <n>', 'measurement shots (default 1024)', integer('--shots'))
    .action(async (file: string, opts: SolveCommandOptions) => {
      process.exitCode = await runSolveCommand(file, opts);
    });
}

export async function runSolveCommand(file: string, opts: SolveCommandOptions, io: SolveIo = defaultIo): Promise<number> {
  let body: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(await io.readInput(file));
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('the file must hold a JSON object like {"solver": "qaoa", "problem": {...}}');
    body = parsed as Record<string, unknown>;
  } catch (error) {
    io.err(`svc solve: cannot use ${file}: ${(error as Error).message}\n`);
    return 2;
  }
  if (opts.seed !== undefined) body['seed'] = opts.seed;
  if (opts.shots !== undefined) body['shots'] = opts.shots;
  const batch = opts.batch === true || Array.isArray(body['problems']);
  if (batch && body['problems'] === undefined && Array.isArray(body['problem'])) {
    body['problems'] = body['problem'];
    delete body['problem'];
  }

  let response: SolveResponse | BatchResponse;
  if (opts.local === true) {
    const service = new SolveService();
    try {
      response = batch ? await service.solveBatch(body) : await service.solve(body);
    } catch (error) {
      io.err(`svc solve: ${describeError(error)}\n`);
      return 1;
    } finally {
      await service.close();
    }
  } else {
    const url = `${opts.url.replace(/\/+$/, '')}/api/solve${batch ? '/batch' : ''}`;
    let res: Response;
    try {
      res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    } catch {
      io.err(`svc solve: no svc daemon answers at ${opts.url}; start one with \`svc serve\`, or solve in this process with --local.\n`);
      return 1;
    }
    const text = await res.text();
    let payload: unknown;
    try {
      payload = JSON.parse(text);
    } catch {
      payload = undefined;
    }
    if (!res.ok) {
      const error = (payload as { error?: { message?: string; code?: string; param?: string | null } } | undefined)?.error;
      const retry = res.headers.get('retry-after');
      io.err(`svc solve: HTTP ${res.status}${error?.code ? ` ${error.code}` : ''}: ${error?.message ?? text.slice(0, 500)}${retry ? ` (retry after ${retry} s)` : ''}\n`);
      return 1;
    }
    response = payload as SolveResponse | BatchResponse;
  }
  io.out(opts.json === true ? `${JSON.stringify(response, null, 2)}\n` : formatResponse(response));
  // A batch answered with failed items is printed in full, and exits 1 like a failed solve.
  return 'results' in response && response.results.some((r) => r.status === 'failed') ? 1 : 0;
}

/**
 * An in-process (--local) failure for the terminal. The cause of an internal error is printed:
 * it is this user's own process, so there is nothing to hide (a daemon keeps it in its log).
 */
export function describeError(error: unknown): string {
  const causeOf = (e: unknown): string => {
    if (e instanceof Error) return e.stack ?? e.message;
    return String(e);
  };
  if (error instanceof ApiError) {
    const head = `${error.status} ${error.code}: ${error.message}${error.retryAfterSeconds ? ` (retry after ${error.retryAfterSeconds} s)` : ''}`;
    return error.status >= 500 && error.cause !== undefined ? `${head}\ncause: ${causeOf(error.cause)}` : head;
  }
  return `internal error: ${causeOf(error)}`;
}

/** A readable summary of a solve or batch response. */
export function formatResponse(response: SolveResponse | BatchResponse): string {
  const lines: string[] = [];
  if ('results' in response) {
    const failed = response.results.filter((r) => r.status === 'failed').length;
    lines.push(`${response.id}  ${response.solver} batch on ${response.substrate}: ${response.results.length} problems, ${response.status} in ${response.total_elapsed_ms} ms${failed > 0 ? ` (${failed} failed)` : ''}`);
    for (const r of response.results) {
      lines.push('', `[${r.index}]`);
      if (r.status === 'failed') lines.push(`  FAILED ${r.error.code}${r.error.param ? ` (${r.error.param})` : ''}: ${r.error.message}`);
      else lines.push(...describeSolution(r.solution, r.meta).map((l) => `  ${l}`));
    }
  } else {
    lines.push(`${response.id}  ${response.solver} on ${response.substrate}: ${response.status} in ${response.meta.elapsed_ms} ms`);
    lines.push(...describeSolution(response.solution, response.meta).map((l) => `  ${l}`));
  }
  return `${lines.join('\n')}\n`;
}

function fmt(x: unknown, digits = 4): string {
  return typeof x === 'number' ? String(Number(x.toPrecision(digits))) : String(x);
}

function describeSolution(s: Record<string, unknown>, meta: SolveResponse['meta']): string[] {
  const lines = [`method: ${String(s['method'])}${s['feasible'] === false ? '  (INFEASIBLE)' : ''}`];
  if (Array.isArray(s['route'])) lines.push(`route: ${(s['route'] as string[]).join(' → ')}  (${fmt(s['cost'], 6)} ${String(s['unit'])})`);
  if (Array.isArray(s['routes'])) {
    for (const r of s['routes'] as { vehicle: number; stops: string[]; distance_km: number }[]) {
      lines.push(`vehicle ${r.vehicle}: ${r.stops.length > 0 ? r.stops.join(' → ') : '(unused)'}  (${fmt(r.distance_km, 6)} km)`);
    }
  }
  if (Array.isArray(s['violations'])) for (const v of s['violations'] as string[]) lines.push(`violation: ${v}`);
  if ('target_index' in s) {
    lines.push(
      s['found'] === false
        ? `not found: ${String(s['reason'] ?? 'no match')} (confidence ${fmt(s['confidence'])})`
        : `match: record ${String(s['target_index'])} (confidence ${fmt(s['confidence'])})${typeof s['record'] === 'string' ? `: ${s['record'].slice(0, 120)}` : ''}`,
    );
  }
  if (typeof s['entropy'] === 'string') lines.push(`entropy (${String(s['format'])}, ${String(s['bits'])} bits, ${String(s['randomness_source'])} on a simulated substrate):`, s['entropy']);
  if (Array.isArray(s['clusters'])) {
    for (const c of s['clusters'] as { id: number; members: string[] }[]) lines.push(`cluster ${c.id}: ${c.members.join(', ')}`);
  }
  if (Array.isArray(s['predictions'])) {
    (s['predictions'] as { label: string; confidence: number }[]).forEach((p, i) => lines.push(`predict[${i}]: ${p.label} (confidence ${fmt(p.confidence, 3)})`));
  }
  if (Array.isArray(s['selected'])) {
    lines.push(
      s['feasible'] === false
        ? `no selection: ${String(s['reason'])}`
        : `selected: ${(s['selected'] as string[]).join(', ')}  expected return ${fmt(s['expected_return'])}  risk ${fmt(s['risk'])}`,
    );
  }
  // bounds and gaps as the solver rounded them (down and up): rounding them again to the nearest could make a bound overstate
  if (s['optimality_gap'] !== undefined) lines.push(`optimality gap vs exact classical optimum: ${String(s['optimality_gap'])}`);
  if (s['lower_bound'] !== undefined) lines.push(`lower bound: ${String(s['lower_bound'])} km (answer at most ${String(s['gap_to_lower_bound'])} above the optimum)`);
  const quantumRoute = s['quantum_result'] as { method: string; cost: number | null } | undefined;
  if (quantumRoute !== undefined) lines.push(`quantum result (${quantumRoute.method}): ${quantumRoute.cost === null ? 'no valid ordering measured' : `${fmt(quantumRoute.cost, 6)} km`}`);
  const circuit = s['circuit'] as { qubits?: number } | undefined;
  lines.push(`shots ${meta.shots}, optimal count ${meta.optimal_count}, energy ${fmt(meta.energy, 6)}, depth ${meta.depth}${circuit?.qubits ? `, ${circuit.qubits} qubits` : ''}`);
  return lines;
}
