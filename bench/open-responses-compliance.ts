/**
 * The Open Responses compliance suite (openresponses/openresponses, its `test:compliance`
 * runner, bin/compliance-test.ts) run against `svc serve`'s `/v1/responses`, as its README runs
 * it against a local server. The suite is not on the npm registry and its runner is written for
 * Bun, so this script takes a checkout of it (fetched, never vendored) and runs the runner under
 * svc's own Node 24: a resolve hook adds the `.ts` its extensionless imports leave out, and its
 * `zod` import (zod 3) is served by `zod/v3`, the zod 3 API that svc's zod 4 package ships.
 *
 * The daemon serves the tiny fixture model's ending variant (endingModelPath): random weights, so
 * replies are noise, but they end on their own, as the suite's `completed` checks need. Every test
 * must pass except those in EXCLUDED (each with its reason; docs/runtime.md lists them too); the
 * run fails on any other failure and on an excluded test that passes, so the list stays honest.
 *
 * Usage: npm run bench:open-responses -- --suite /path/to/openresponses [--json]
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { endingModelPath, startDaemon } from '../test/helpers/daemon-process.ts';

/** Test id → why it cannot pass against svc (see docs/runtime.md, "Open Responses compliance"). */
export const EXCLUDED: ReadonlyMap<string, string> = new Map([
  ['tool-calling', 'tool_choice "auto" leaves calling to the model; a random-weights model never chooses to (svc\'s function_call items are checked with tool_choice "required" in test/runtime/tools-openai-client.test.ts)'],
  ['image-input', 'image input needs a vision model; svc\'s local engine is text-only and refuses input_image with 400'],
]);

/** Adds `.ts` to relative imports that name no extension (Bun resolves them; Node does not). */
const HOOKS = `
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
let zod;
export function initialize(data) { zod = data.zod; }
export async function resolve(spec, ctx, next) {
  if (spec === 'zod') return next(zod, ctx);
  if ((spec.startsWith('./') || spec.startsWith('../')) && !/\\.[cm]?[jt]sx?$/.test(spec)) {
    const url = new URL(spec + '.ts', ctx.parentURL);
    if (existsSync(fileURLToPath(url))) return next(url.href, ctx);
  }
  return next(spec, ctx);
}`;

const LOADER = `
import { register } from 'node:module';
register('data:text/javascript,' + encodeURIComponent(${JSON.stringify(HOOKS)}), { data: { zod: ${JSON.stringify(import.meta.resolve('zod/v3'))} } });`;

interface SuiteResult {
  id: string;
  name: string;
  status: 'passed' | 'failed' | 'skipped';
  errors?: string[];
}

const { values: flags } = parseArgs({
  options: {
    suite: { type: 'string' },
    json: { type: 'boolean', default: false },
  },
});

async function runSuite(suite: string, baseUrl: string): Promise<SuiteResult[]> {
  const child = spawn(process.execPath, [
    '--no-warnings', '--import', `data:text/javascript,${encodeURIComponent(LOADER)}`,
    join(suite, 'bin/compliance-test.ts'), '--base-url', baseUrl, '--api-key', 'none', '--model', 'tiny', '--json',
  ], { cwd: suite, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => { stdout += d.toString(); });
  child.stderr.on('data', (d: Buffer) => { stderr += d.toString(); });
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  const start = stdout.indexOf('{');
  if (start < 0) throw new Error(`the suite's runner exited with ${code} and printed no results; stderr: ${stderr}`);
  return (JSON.parse(stdout.slice(start)) as { results: SuiteResult[] }).results;
}

async function main(): Promise<void> {
  const suite = flags.suite;
  if (suite === undefined || !existsSync(join(suite, 'bin/compliance-test.ts'))) {
    console.error('usage: npm run bench:open-responses -- --suite <checkout of openresponses/openresponses> (bin/compliance-test.ts not found)');
    process.exit(2);
  }
  const daemon = await startDaemon({ withModel: false, args: ['--model', `tiny=${endingModelPath()}`] });
  let results: SuiteResult[];
  try {
    results = await runSuite(suite, `${daemon.url}/v1`);
  } finally {
    await daemon.stop();
  }
  const problems: string[] = [];
  for (const r of results) {
    const excluded = EXCLUDED.has(r.id);
    if (r.status === 'failed' && !excluded) problems.push(`${r.id} failed: ${(r.errors ?? []).join('; ')}`);
    if (r.status === 'passed' && excluded) problems.push(`${r.id} passes but is listed as excluded: take it off the list`);
  }
  const passed = results.filter((r) => r.status === 'passed').length;
  const excluded = results.filter((r) => EXCLUDED.has(r.id)).length;
  const summary = { passed, failed: results.filter((r) => r.status === 'failed').length, excluded, total: results.length, problems };
  if (flags.json) console.log(JSON.stringify({ summary, results: results.map(({ id, status, errors }) => ({ id, status, errors })) }, null, 2));
  else {
    for (const r of results) console.log(`${r.status === 'passed' ? 'pass' : EXCLUDED.has(r.id) ? 'excl' : r.status.padEnd(4)} ${r.id}${r.status === 'failed' && !EXCLUDED.has(r.id) ? `: ${(r.errors ?? []).join('; ')}` : ''}`);
    console.log(`\n${passed} passed of ${results.length - excluded} run (${results.length} in the suite, ${excluded} excluded)`);
    for (const p of problems) console.log(`problem: ${p}`);
  }
  process.exit(problems.length === 0 ? 0 : 1);
}

await main();
