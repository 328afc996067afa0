import { Command } from 'commander';
import { svcCommit, versionLine } from '../shared/svc-commit.ts';
import { SVC_VERSION } from '../shared/version.ts';
import { registerAdminCommand } from './admin-command.ts';
import { debugRequested, reportCliError } from './cli-errors.ts';
import { registerDoctorCommand } from './doctor-command.ts';
import { registerEvidenceCommand } from './evidence-command.ts';
import { registerHostedCommand } from './hosted-command.ts';
import { registerMcpCommand } from './mcp-command.ts';
import { registerModelsCommand } from './models-command.ts';
import { registerServeCommand } from './serve-command.ts';
import { registerSolveCommand } from './solve-command.ts';
import { registerSpacesCommand } from './spaces-command.ts';
import { registerTelemetryCommand } from './telemetry-command.ts';
import { registerWorkerCommand } from './worker-command.ts';

const program = new Command('svc')
  .description('svc: a local-first AI runtime — an OpenAI-compatible daemon on llama.cpp, and quantum solvers')
  // `svc 0.1.0 (1a2b3c4d5e6f)`: the commit says which build a bug report is about.
  .version(versionLine(SVC_VERSION, svcCommit()))
  // A usage error is one line and a pointer, not the whole help text (inherited by every command).
  .showHelpAfterError('(add --help for usage)')
  .enablePositionalOptions();

registerServeCommand(program);
registerHostedCommand(program);
registerWorkerCommand(program);
registerAdminCommand(program);
registerModelsCommand(program);
registerSolveCommand(program);
registerSpacesCommand(program);
registerMcpCommand(program);
registerEvidenceCommand(program);
registerTelemetryCommand(program);
registerDoctorCommand(program);

// The command that is running ("models list"), to name it in an error report.
let running = '';
program.hook('preAction', (_program, action) => {
  const names: string[] = [];
  for (let c: Command | null = action; c !== null && c !== program; c = c.parent) names.unshift(c.name());
  running = names.join(' ');
});

// One place for every error a command throws: one line on stderr and a non-zero exit.
try {
  await program.parseAsync(process.argv);
} catch (error) {
  process.exitCode = reportCliError(error, running, { write: (text) => process.stderr.write(text), debug: debugRequested() });
}
