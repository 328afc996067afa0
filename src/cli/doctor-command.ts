import { existsSync } from 'node:fs';
import { InvalidArgumentError, Option, type Command } from 'commander';
import { resolveRuntimeConfig } from '../app/runtime-config.ts';
import { ConfigError } from '../shared/config-values.ts';
import { svcCommit, versionLine } from '../shared/svc-commit.ts';
import { SVC_NODE_RANGE, SVC_VERSION } from '../shared/version.ts';
import { checkDataDir, checkLlama, checkModels, checkNode, checkPort, checkPostgres, checkRedis, type CheckResult } from './doctor-checks.ts';
import { printable } from './model-view.ts';
import { engineOptions } from './serve-command.ts';
import { UserError } from '../shared/user-error.ts';

interface DoctorOptions {
  port?: string[];
  dataDir?: string;
  gpu?: string;
  discover?: string;
  databaseUrl?: string;
  redisUrl?: string;
  timeout: string;
  json?: boolean;
}

const collect = (value: string, previous: string[] | undefined): string[] => [...(previous ?? []), value];

/** A URL flag left empty (`SVC_REDIS_URL=`) is not configured. */
const configured = (url: string | undefined): string | undefined => (url === undefined || url.trim() === '' ? undefined : url.trim());

/**
 * Runs every check at once (loading llama.cpp takes the longest, about 2 s) and lists them in a
 * fixed order. The ports, data dir, GPU and discovery come from the flags and SVC_* variables
 * `svc serve` reads, resolved by its own config code; PostgreSQL and Redis only when configured.
 */
export async function runDoctor(opts: DoctorOptions): Promise<CheckResult[]> {
  let config;
  try {
    // No env: the upstreams' keys and telemetry settings it would read there are not the doctor's.
    config = resolveRuntimeConfig({ port: opts.port, dataDir: opts.dataDir, gpu: opts.gpu, discover: opts.discover }, {});
  } catch (error) {
    throw error instanceof ConfigError ? new UserError(error.message, { exitCode: 2 }) : error;
  }
  const timeoutMs = Number(opts.timeout) * 1000;
  const database = configured(opts.databaseUrl);
  const redis = configured(opts.redisUrl);
  return Promise.all([
    checkNode(SVC_NODE_RANGE),
    checkLlama(config.gpu),
    checkModels(config.dataDir, config.discover, existsSync(config.dataDir)),
    ...config.ports.map((port) => checkPort(port)),
    checkDataDir(config.dataDir),
    ...(database === undefined ? [] : [checkPostgres(database, timeoutMs)]),
    ...(redis === undefined ? [] : [checkRedis(redis, timeoutMs)]),
  ]);
}

/** One line a check: its mark, its name, what it found; notes indented under it. */
export function formatChecks(results: readonly CheckResult[]): string {
  const width = Math.max(...results.map((r) => r.name.length));
  return results.map((r) => {
    const line = `${r.mark.padEnd(4)}  ${r.name.padEnd(width)}  ${printable(r.detail)}\n`;
    return line + (r.notes ?? []).map((note) => `${' '.repeat(width + 8)}${printable(note)}\n`).join('');
  }).join('');
}

/** `svc doctor`: this machine in one screen; exit 1 when a check fails. */
export function registerDoctorCommand(program: Command): void {
  const doctor = program
    .command('doctor')
    .description('check this machine: Node, the llama.cpp backend, models, ports, the data dir, and PostgreSQL/Redis when configured')
    .addOption(new Option('-p, --port <port>', 'a port svc serve would listen on; repeat for several [default: 11435 and 11440]').env('SVC_PORT').argParser(collect))
    .addOption(new Option('-d, --data-dir <dir>', 'svc data directory [default: ~/.svc]').env('SVC_DATA_DIR'));
  // The same --gpu and --discover (and SVC_GPU, SVC_DISCOVER) as svc serve: the doctor sees what the daemon would.
  for (const option of engineOptions()) if (option.attributeName() === 'gpu' || option.attributeName() === 'discover') doctor.addOption(option);
  doctor
    .addOption(new Option('--database-url <url>', 'check this PostgreSQL (as svc hosted takes it)').env('SVC_DATABASE_URL'))
    .addOption(new Option('--redis-url <url>', 'check this Redis (as svc hosted takes it)').env('SVC_REDIS_URL'))
    .addOption(new Option('--timeout <seconds>', 'longest wait for PostgreSQL or Redis to answer').default('3').argParser((v: string) => {
      if (!/^\d{1,3}(\.\d+)?$/.test(v) || Number(v) <= 0) throw new InvalidArgumentError('a number of seconds above 0, at most 999');
      return v;
    }))
    .addOption(new Option('--json', 'print the checks as JSON on stdout'))
    .action(async (opts: DoctorOptions) => {
      const results = await runDoctor(opts);
      const failed = results.some((r) => r.mark === 'fail');
      if (opts.json === true) {
        process.stdout.write(`${JSON.stringify({ version: SVC_VERSION, commit: svcCommit() ?? null, ok: !failed, checks: results }, null, 2)}\n`);
      } else {
        process.stdout.write(`${versionLine(SVC_VERSION, svcCommit())}\n${formatChecks(results)}`);
      }
      process.exitCode = failed ? 1 : 0;
    });
}
