import { Option, type Command } from 'commander';
import { z } from 'zod';
import type { SolveJobWorkerConfig } from '../app/solve-job-worker.ts';
import { hardwareFrom, LOG_LEVELS } from '../app/runtime-config.ts';
import type { RawHardwareOptions } from '../quantum/hardware/hardware-config.ts';
import { ConfigError, parseDuration } from '../shared/config-values.ts';
import { hardwareOptions } from './hardware-options.ts';
import { runServer } from './run-server.ts';
import { REDACTED_LOG_PATHS } from './serve-command.ts';

interface RawWorkerOptions extends RawHardwareOptions {
  redisUrl?: string;
  databaseUrl?: string;
  redisKeyPrefix?: string;
  workers?: string;
  jobLock?: string;
  logLevel?: string;
}

/** Flags and SVC_* variables → the worker's settings; ConfigError (exit 2) with one line. */
export function resolveWorkerConfig(raw: RawWorkerOptions): SolveJobWorkerConfig {
  if ((raw.redisUrl ?? '') === '') throw new ConfigError('--redis-url: svc worker takes solve jobs from the Redis queue the gateways (svc hosted --redis-url) share.');
  if (!/^postgres(ql)?:\/\//.test(raw.databaseUrl ?? '')) throw new ConfigError('--database-url: svc worker writes results to the PostgreSQL store the gateways share (postgres://…).');
  const workers = raw.workers === undefined ? undefined : z.coerce.number().int().min(1).max(1024).safeParse(raw.workers);
  if (workers !== undefined && !workers.success) throw new ConfigError(`--workers: '${raw.workers}' must be a whole number from 1 to 1024.`);
  if (raw.redisKeyPrefix !== undefined && !/^[\x21-\x7e]{1,64}$/.test(raw.redisKeyPrefix)) throw new ConfigError(`--redis-key-prefix: '${raw.redisKeyPrefix}' must be 1 to 64 printable characters without spaces.`);
  return {
    redisUrl: raw.redisUrl!,
    databaseUrl: raw.databaseUrl!,
    redisKeyPrefix: raw.redisKeyPrefix,
    workers: workers?.data,
    lockDurationMs: raw.jobLock === undefined ? undefined : parseDuration(raw.jobLock, '--job-lock'),
    hardware: hardwareFrom(raw),
  };
}

/** `svc worker`: runs solve jobs from the shared queue (docs/scale-out.md). */
export function registerWorkerCommand(program: Command): void {
  const worker = program
    .command('worker')
    .description('take solve jobs from the shared Redis queue and run them on this machine\'s simulator threads (docs/scale-out.md)')
    .addOption(new Option('--redis-url <url>', 'the Redis the gateways (svc hosted --redis-url) queue jobs on').env('SVC_REDIS_URL'))
    .addOption(new Option('--database-url <url>', 'the PostgreSQL the gateways (svc hosted --database-url) share').env('SVC_DATABASE_URL'))
    .addOption(new Option('--redis-key-prefix <prefix>', 'the gateways\' --redis-key-prefix, if they set one').env('SVC_REDIS_KEY_PREFIX'))
    .addOption(new Option('--workers <n>', 'simulator threads, and jobs run at once [default: the machine\'s cores]').env('SVC_SOLVE_WORKERS'))
    .addOption(new Option('--job-lock <duration>', 'how long a running job\'s lock lasts unrenewed: a worker that dies has its job run elsewhere after it [default: 30s]').env('SVC_JOB_LOCK'));
  for (const option of hardwareOptions()) worker.addOption(option);
  worker
    .addOption(new Option('--log-level <level>', 'log level').choices(LOG_LEVELS).env('SVC_LOG_LEVEL'))
    .action(async (parsed: RawWorkerOptions) => {
      const config = resolveWorkerConfig(parsed);
      const [{ default: pino }, { startSolveJobWorker }] = await Promise.all([import('pino'), import('../app/solve-job-worker.ts')]);
      const log = pino({ level: parsed.logLevel ?? 'info', redact: { paths: REDACTED_LOG_PATHS, censor: '[redacted]' } });
      await runServer(() => startSolveJobWorker(config, log), log, () => 'svc worker listens on no port');
    });
}
