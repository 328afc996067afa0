/**
 * The MCP project's own conformance suite (`@modelcontextprotocol/conformance` 0.2) run by its
 * CLI against the real daemon's `/mcp`, as SDK maintainers run it: what protocol revision
 * 2026-07-28 requires and what 2025-11-25 requires (`--requirements`), each against a daemon with
 * sessions (the default) and one with `--mcp-stateless`. The baseline (conformance-baseline.yml)
 * lists only scenarios that need the suite's fixture tools, resources or prompts, or a capability
 * svc does not offer; the CLI fails the run on any other failure or warning in a scenario it
 * scores, and on a baseline entry that passes. See docs/mcp-conformance.md.
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

type Revision = '2026-07-28' | '2025-11-25';

/**
 * Scenarios that test general protocol behaviour rather than fixtures, per revision: each must
 * run and pass. (`server-session-lifecycle` and the 2025-11-25 `server-sse-multiple-streams` need a
 * 2025 session, so the stateless run leaves them out: see MODES.)
 */
const MUST_PASS: Record<Revision, readonly string[]> = {
  '2026-07-28': [
    'tools-list',
    'resources-list',
    'prompts-list',
    'sep-2164-resource-not-found',
    'server-sse-multiple-streams',
    'dns-rebinding-protection',
    'caching',
  ],
  '2025-11-25': [
    'server-initialize',
    'server-session-lifecycle',
    'ping',
    'logging-set-level',
    'tools-list',
    'resources-list',
    'prompts-list',
    'server-sse-multiple-streams',
    'dns-rebinding-protection',
  ],
};

/**
 * Baseline scenarios that mostly pass: only these checks may fail (each needs a diagnostic
 * fixture tool svc lacks and reports "Not testable"), every other check in them must pass.
 */
const PARTIAL = new Map<string, ReadonlySet<string>>([
  ['server-stateless', new Set(['ServerRejectsUndeclaredCapability', 'MissingCapabilityHttp400', 'HttpServerNoIndependentRequestsOnStream', 'ServerNoLogWithoutLogLevel'])],
]);

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
  /** Scenarios the CLI ran but does not score for the revision (extensions, pending ones). */
  unscored: Set<string>;
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
async function runSuite(url: string, revision: Revision, expected: ReadonlySet<string>): Promise<SuiteRun> {
  const work = mkdtempSync(join(tmpdir(), 'svc-mcp-conformance-'));
  try {
    const results = join(work, 'results');
    const baseline = join(work, 'baseline.yml');
    writeFileSync(baseline, `server:\n${[...expected].map((name) => `  - ${name}\n`).join('')}`);
    const child = spawn(process.execPath, [CLI, 'server', '--url', url, '--requirements', revision, '--expected-failures', baseline, '--output-dir', results], {
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
    const plain = output.replace(/\x1b\[[0-9;]*m/g, '');
    const required = await requiredScenarios(revision);
    return { code, output: plain, scenarios, unscored: new Set([...scenarios.keys()].filter((name) => !required.has(name))) };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/**
 * The server scenarios a revision requires (`conformance list --requirements`): the ones the CLI
 * scores. It runs others too (extensions, pending scenarios, later additions) without scoring them.
 */
async function requiredScenarios(revision: Revision): Promise<Set<string>> {
  const child = spawn(process.execPath, [CLI, 'list', '--server', '--requirements', revision]);
  let output = '';
  child.stdout.on('data', (d: Buffer) => { output += d.toString(); });
  await new Promise((resolve) => child.once('exit', resolve));
  const plain = output.replace(/\x1b\[[0-9;]*m/g, '');
  const section = plain.slice(plain.indexOf('Server scenarios')).split('\n\n')[0] ?? '';
  return new Set([...section.matchAll(/^\s+-\s+([a-z0-9-]+)\s*$/gm)].map((m) => m[1]!));
}

/** A scenario fails on a FAILURE or a WARNING check, as the CLI's baseline rule counts it. */
function problems(checks: readonly Check[]): string[] {
  return checks
    .filter((c) => c.status === 'FAILURE' || c.status === 'WARNING')
    .map((c) => `${c.status} ${c.name}: ${c.errorMessage ?? c.description}`);
}

const MODES = [
  { name: 'with sessions (the default)', args: [], notApplicable: [] },
  // Without 2025 sessions there is no session to follow through its life, and no session id
  // for several streams to share: both scenarios find none and warn, which the CLI counts as a
  // failure. (2025-11-25 does not score the first; the must-pass list names it.)
  { name: 'stateless (--mcp-stateless)', args: ['--mcp-stateless'], notApplicable: ['server-session-lifecycle', 'server-sse-multiple-streams'] },
];
const REVISIONS: readonly Revision[] = ['2026-07-28', '2025-11-25'];

for (const mode of MODES) {
  describe(`conformance ${mode.name}`, () => {
    let daemon: DaemonProcess;
    const runs = new Map<Revision, SuiteRun>();
    const expectedFor = (revision: Revision): Set<string> => new Set([...baselineScenarios(), ...(revision === '2025-11-25' ? mode.notApplicable : [])]);

    before(async () => {
      daemon = await startDaemon({ args: mode.args });
      for (const revision of REVISIONS) runs.set(revision, await runSuite(`${daemon.url}/mcp`, revision, expectedFor(revision)));
    });

    after(async () => {
      await daemon.stop();
    });

    for (const revision of REVISIONS) {
      test(`${revision}: the CLI passes against /mcp with only non-applicable scenarios in the baseline`, () => {
        const run = runs.get(revision)!;
        const expected = expectedFor(revision);
        const unexpected: string[] = [];
        const stale: string[] = [];
        for (const [name, checks] of run.scenarios) {
          if (run.unscored.has(name)) continue;
          const failed = problems(checks);
          if (failed.length > 0 && !expected.has(name)) unexpected.push(`${name}: ${failed.join('; ')}`);
          if (failed.length === 0 && expected.has(name)) stale.push(name);
        }
        const summary = run.output.slice(run.output.indexOf('=== SUMMARY ==='));
        assert.deepEqual({ unexpected, stale }, { unexpected: [], stale: [] }, `unexpected failures: ${unexpected.join('\n')}\nstale baseline entries: ${stale.join(', ')}\n${summary}`);
        assert.equal(run.code, 0, summary);
      });

      test(`${revision}: every protocol scenario (not a fixture) ran and passed`, () => {
        const run = runs.get(revision)!;
        for (const name of MUST_PASS[revision].filter((n) => !expectedFor(revision).has(n))) {
          const checks = run.scenarios.get(name);
          assert.ok(checks && checks.some((c) => c.status === 'SUCCESS'), `${name} did not run or had no passing check`);
          assert.deepEqual(problems(checks), [], name);
        }
      });

      test(`${revision}: a partly applicable scenario fails only its fixture checks`, () => {
        const run = runs.get(revision)!;
        for (const [name, allowed] of PARTIAL) {
          const checks = run.scenarios.get(name);
          if (checks === undefined) continue;
          const failing = checks.filter((c) => c.status === 'FAILURE' || c.status === 'WARNING').map((c) => c.name);
          assert.deepEqual(failing.filter((id) => !allowed.has(id)), [], `${name}: only the fixture checks may fail`);
          assert.ok(checks.filter((c) => c.status === 'SUCCESS').length >= 20, `${name}: its protocol checks ran`);
        }
      });
    }

    test('every baseline entry names a scenario one of the revisions scores', () => {
      const scored = new Set([...runs.values()].flatMap((run) => [...run.scenarios.keys()].filter((name) => !run.unscored.has(name))));
      for (const name of baselineScenarios()) assert.ok(scored.has(name), `baseline names ${name}, which no run scored`);
    });
  });
}
