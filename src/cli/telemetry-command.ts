import { Option, type Command } from 'commander';
import { UserError } from '../shared/user-error.ts';
import { DaemonClient, DEFAULT_DAEMON_URL, isRecord } from './daemon-client.ts';

/**
 * `svc telemetry send [--dry-run]`: asks the running daemon (`--url`) for the report it would
 * send (`GET /telemetry`) and prints it, or has it send one now (`POST /telemetry/send`). The
 * JSON on stdout is the request body, byte for byte; what it means goes to stderr.
 */
export interface TelemetryIo {
  out: (text: string) => void;
  err: (text: string) => void;
}

const defaultIo: TelemetryIo = {
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
};

/** The daemon allows the endpoint 10 s; a little more here, so its answer (not ours) says what happened. */
const SEND_WAIT_MS = 15_000;

function clientFor(url: string | undefined): DaemonClient {
  try {
    return new DaemonClient(url ?? DEFAULT_DAEMON_URL);
  } catch (error) {
    throw new UserError((error as Error).message, { exitCode: 2 });
  }
}

function errorMessage(body: unknown): string | undefined {
  const error = isRecord(body) ? body.error : undefined;
  return isRecord(error) && typeof error.message === 'string' ? error.message : undefined;
}

export async function runTelemetrySend(opts: { dryRun?: boolean; url?: string }, io: TelemetryIo = defaultIo): Promise<void> {
  const client = clientFor(opts.url);
  const noDaemon = () => new UserError(`no svc daemon answers at ${client.base}; start one (svc serve) or name it with --url`);
  if (opts.dryRun === true) {
    const got = await client.get('/telemetry');
    if (got === undefined) throw noDaemon();
    if (got.status !== 200 || !isRecord(got.body) || !isRecord(got.body.payload)) {
      throw new UserError(`the daemon at ${client.base} answered ${got.status} to GET /telemetry${errorMessage(got.body) === undefined ? '' : `: ${errorMessage(got.body)}`}`);
    }
    // The sender serializes the payload the same way: this line is the body it would post.
    io.out(`${JSON.stringify(got.body.payload)}\n`);
    io.err(got.body.mode === 'basic'
      ? `dry run: this is what the daemon would POST to ${String(got.body.endpoint)} now; nothing was sent\n`
      : 'dry run: telemetry is none, so nothing is ever sent; with --telemetry basic the daemon would POST this\n');
    return;
  }
  const got = await client.post('/telemetry/send', SEND_WAIT_MS);
  if (got === undefined) throw noDaemon();
  if (got.status !== 200 || !isRecord(got.body) || !isRecord(got.body.payload)) {
    throw new UserError(errorMessage(got.body) ?? `the daemon at ${client.base} answered ${got.status} to POST /telemetry/send`);
  }
  io.out(`${JSON.stringify(got.body.payload)}\n`);
  io.err(`sent to ${String(got.body.endpoint)} at ${String(got.body.sent_at)}\n`);
}

export function registerTelemetryCommand(program: Command): void {
  const telemetry = program
    .command('telemetry')
    .description('basic telemetry: see or send the report the running daemon sends once a day (docs/telemetry.md)');
  telemetry
    .command('send')
    .description('send the report now (the daemon must run with --telemetry basic), or with --dry-run print exactly what would be sent')
    .option('--dry-run', 'print the JSON body that would be sent, and send nothing')
    .addOption(new Option('--url <url>', `the running daemon to ask [default: ${DEFAULT_DAEMON_URL}]`).env('SVC_URL'))
    .action(async (opts: { dryRun?: boolean; url?: string }) => {
      await runTelemetrySend(opts);
    });
}
