/**
 * The MCP project's own conformance suite (`@modelcontextprotocol/conformance`, its active
 * server scenarios) run by its CLI against the real daemon's `/mcp`, as SDK maintainers run it:
 * once with sessions (the default) and once with `--mcp-stateless`. The baseline
 * (conformance-baseline.yml) lists only scenarios that need the suite's fixture tools, resources
 * or prompts, or a capability svc does not offer; the CLI fails the run on any other failure or
 * warning, and on a baseline entry that passes. See docs/mcp-conformance.md.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { startDaemon, type DaemonProcess } from '../helpers/daemon-process.ts';

const BASELINE = fileURLToPath(new URL('conformance-baseline.yml', import.meta.url));
const require = createRequire(import.meta.url);
const CLI = join(dirname(require.resolve('@modelcontextprotocol/conformance/package.json')), 'dist/index.js');

/**
 * Scenarios that test general protocol behaviour rather than fixtures: each must run and pass.
 * `tools-call-error` and `tools-call-simple-text` pass too, but trivially: they call fixture tools
 * svc lacks, and the SDK answers an unknown tool with an `isError` text result, which is all they
 * inspect. They test the SDK, not svc, so they are not listed here.
 */
const MUST_PASS = [
  'server-initialize',
  'ping',
  'logging-set-level',
  'tools-list',
  'resources-list',
  'prompts-list',
  'server-sse-multiple-streams',
  'dns-rebinding-protection',
];

interface Check {
  name: string;
  status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'INFO' | 'SKIPPED';
  description: string;
  errorMessage?: string;
}

interface SuiteRun {
  code: number | null;
  output: string;
  /** Scenario name → its checks, from the result directories the CLI wrote. */
  scenarios: Map<string, Check[]>;
}

/** The baseline's `server:` entries (a plain YAML list of names under one key). */
function baselineScenarios(): Set<string> {
  const names = new Set<string>();
  for (const line of readFileSync(BASELINE, 'utf8').split('\n')) {
    const entry = /^\s+-\s+([a-z0-9-]+)\s*$/.exec(line);
    if (entry) names.add(entry[1]!);
  }
  return names;
}

/**
 * Runs the CLI (node from `process.execPath`) with its results and working directory in a temp
 * dir; `expected` is the baseline for this run (the file's, plus what a mode rules out).
 */
async function runSuite(url: string, expected: ReadonlySet<string>): Promise<SuiteRun> {
  const work = mkdtempSync(join(tmpdir(), 'svc-mcp-conformance-'));
  try {
    const results = join(work, 'results');
    const baseline = join(work, 'baseline.yml');
    writeFileSync(baseline, `server:\n${[...expected].map((name) => `  - ${name}\n`).join('')}`);
    const child = spawn(process.execPath, [CLI, 'server', '--url', url, '--expected-failures', baseline, '--output-dir', results], {
      cwd: work,
    });
    let output = '';
    child.stdout.on('data', (d: Buffer) => { output += d.toString(); });
    child.stderr.on('data', (d: Buffer) => { output += d.toString(); });
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    const scenarios = new Map<string, Check[]>();
    for (const dir of readdirSync(results)) {
      // `server-<scenario>-<ISO timestamp with dashes>`
      const name = /^server-(.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$/.exec(dir)?.[1];
      if (name) scenarios.set(name, JSON.parse(readFileSync(join(results, dir, 'checks.json'), 'utf8')) as Check[]);
    }
    // The CLI colours its output unconditionally.
    return { code, output: output.replace(/\x1b\[[0-9;]*m/g, ''), scenarios };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** A scenario fails on a FAILURE or a WARNING check, as the CLI's baseline rule counts it. */
function problems(checks: readonly Check[]): string[] {
  return checks
    .filter((c) => c.status === 'FAILURE' || c.status === 'WARNING')
    .map((c) => `${c.status} ${c.name}: ${c.errorMessage ?? c.description}`);
}

const MODES = [
  { name: 'with sessions (the default)', args: [], notApplicable: [] },
  // Without sessions there are no streams to multiplex: the scenario finds no session id and
  // warns, which the CLI counts as a failure.
  { name: 'stateless (--mcp-stateless)', args: ['--mcp-stateless'], notApplicable: ['server-sse-multiple-streams'] },
];

for (const mode of MODES) {
  describe(`conformance ${mode.name}`, () => {
    const expected = new Set([...baselineScenarios(), ...mode.notApplicable]);
    let daemon: DaemonProcess;
    let run: SuiteRun;

    before(async () => {
      daemon = await startDaemon({ args: mode.args });
      run = await runSuite(`${daemon.url}/mcp`, expected);
    });

    after(async () => {
      await daemon.stop();
    });

    test('the conformance CLI passes against /mcp with only non-applicable scenarios in the baseline', () => {
      const unexpected: string[] = [];
      const stale: string[] = [];
      for (const [name, checks] of run.scenarios) {
        const failed = problems(checks);
        if (failed.length > 0 && !expected.has(name)) unexpected.push(`${name}: ${failed.join('; ')}`);
        if (failed.length === 0 && expected.has(name)) stale.push(name);
      }
      const summary = run.output.slice(run.output.indexOf('=== SUMMARY ==='));
      assert.deepEqual({ unexpected, stale }, { unexpected: [], stale: [] }, `unexpected failures: ${unexpected.join('\n')}\nstale baseline entries: ${stale.join(', ')}\n${summary}`);
      assert.equal(run.code, 0, summary);
    });

    test('every protocol scenario (not a fixture) ran and passed', () => {
      for (const name of MUST_PASS.filter((n) => !expected.has(n))) {
        const checks = run.scenarios.get(name);
        assert.ok(checks && checks.some((c) => c.status === 'SUCCESS'), `${name} did not run or had no passing check`);
        assert.deepEqual(problems(checks), [], name);
      }
    });

    test('every baseline entry names a scenario the suite ran', () => {
      for (const name of baselineScenarios()) assert.ok(run.scenarios.has(name), `baseline names ${name}, which the active suite did not run`);
    });
  });
}
