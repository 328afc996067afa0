import { Command } from 'commander';
import { SVC_VERSION } from '../shared/version.ts';
import { registerModelsCommand } from './models-command.ts';
import { registerServeCommand } from './serve-command.ts';
import { registerSolveCommand } from './solve-command.ts';

const program = new Command('svc')
  .description('svc: a local-first AI runtime — an OpenAI-compatible daemon on llama.cpp, and quantum solvers')
  .version(SVC_VERSION)
  .showHelpAfterError()
  .enablePositionalOptions();

registerServeCommand(program);
registerModelsCommand(program);
registerSolveCommand(program);

await program.parseAsync(process.argv);
