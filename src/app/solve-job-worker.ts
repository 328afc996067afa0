import { hostname } from 'node:os';
import type { Logger } from 'pino';
import { openSolveJobs } from '../quantum/jobs/open-solve-jobs.ts';
import { createHardwareSubstrate, type HardwareConfig } from '../quantum/hardware/hardware-config.ts';
import { createSolveService } from '../quantum/solve-service.ts';
import { OffThread } from '../shared/off-thread.ts';
import { solveJobsPrefix } from './hosted-server.ts';

/**
 * `svc worker`: a process that takes solve jobs from the shared queue (BullMQ on Redis) and runs
 * them on its own simulator threads, writing each outcome to the shared job store (PostgreSQL).
 * It listens on no port: gateways (`svc hosted`) take the requests, and any number of workers on
 * any machine that reaches Redis and PostgreSQL share the work. Its liveness and capacity are a
 * record in Redis, renewed every 5 s (bullmq-job-queue.ts), that gateways read.
 */
export interface SolveJobWorkerConfig {
  redisUrl: string;
  databaseUrl: string;
  redisKeyPrefix?: string | undefined;
  /** Simulator threads, and jobs run at once; default: the machine's cores. */
  workers?: number | undefined;
  hardware?: HardwareConfig | undefined;
  lockDurationMs?: number | undefined;
}

export interface SolveJobWorker {
  close(): Promise<void>;
}

export async function startSolveJobWorker(config: SolveJobWorkerConfig, log: Logger): Promise<SolveJobWorker> {
  const offThread = new OffThread();
  const service = createSolveService({ offThread, workers: config.workers, hardware: createHardwareSubstrate(config.hardware) });
  let opened;
  try {
    opened = await openSolveJobs({
      service, sqlitePath: '', databaseUrl: config.databaseUrl, redisUrl: config.redisUrl,
      redisKeyPrefix: solveJobsPrefix(config.redisKeyPrefix), lockDurationMs: config.lockDurationMs, offThread,
    });
  } catch (error) {
    await Promise.all([service.close(), offThread.close()]);
    throw error;
  }
  service.warm();
  log.info({ host: hostname(), pid: process.pid, workers: service.workers, hardware: config.hardware === undefined ? 'not_configured' : config.hardware.backend },
    `svc worker taking solve jobs with ${service.workers} simulator thread${service.workers === 1 ? '' : 's'}`);
  let closing: Promise<void> | undefined;
  return {
    close() {
      closing ??= (async () => {
        log.info('shutting down: jobs running here go back to the queue');
        await opened.close();
        await Promise.all([service.close(), offThread.close()]);
        log.info('stopped');
      })();
      return closing;
    },
  };
}
