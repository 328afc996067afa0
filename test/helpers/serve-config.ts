import { Command } from 'commander';
import { loadServeConfig, registerServeCommand, type ServeOptions } from '../../src/cli/serve-command.ts';
import type { RuntimeConfig } from '../../src/app/runtime-config.ts';

/** Runs `svc serve ARGS` up to the point where the daemon would start, with `env` as the environment. */
export async function loadServeArgs(args: string[], env: Record<string, string> = {}): Promise<RuntimeConfig> {
  const program = new Command('svc').exitOverride();
  registerServeCommand(program);
  const serve = program.commands.find((c) => c.name() === 'serve')!;
  let result: RuntimeConfig | undefined;
  serve.action((parsed: ServeOptions, command: Command) => {
    result = loadServeConfig(parsed, command, { ...process.env, ...env }).config;
  });
  // commander reads SVC_* from process.env while parsing.
  const saved = new Map(Object.keys(env).map((k) => [k, process.env[k]]));
  Object.assign(process.env, env);
  try {
    await program.parseAsync(['node', 'svc', 'serve', ...args]);
  } finally {
    for (const [k, v] of saved) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
  return result!;
}
