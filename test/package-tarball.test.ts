/**
 * svc as a package (docs/offline-install.md): `npm pack` carries exactly its list (the compiled
 * JavaScript of every source file, the files src/ keeps beside its modules, bin/svc.js, the docs;
 * no sources, tests or benchmarks), and the tarball installs with `npm install -g` into a fresh
 * prefix with no network (a loopback registry answers from the lock file and this machine's npm
 * cache, test/helpers/local-npm-registry.ts), after which the installed `svc` runs from any
 * directory: --version with the packed commit, serve to /health and the console, solve, models.
 * Where this machine has a Node other than 24 on PATH (a system Node 20, say) the installed bin
 * runs on it, so the hand-over to the package's own Node 24 is what is tested.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join, relative, sep } from 'node:path';
import { createInterface } from 'node:readline';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { svcCommit } from '../src/shared/svc-commit.ts';
import { SVC_VERSION } from '../src/shared/version.ts';
import { startLocalNpmRegistry, type LocalNpmRegistry } from './helpers/local-npm-registry.ts';
import { patternProblem } from './quantum/fixtures.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const POSIX = process.platform !== 'win32';

function filesUnder(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => relative(ROOT, join(e.parentPath, e.name)).split(sep).join('/'));
}

/** What the tarball must hold, file for file: the package's list made concrete from the checkout. */
function expectedFiles(): Set<string> {
  const files = new Set(['package.json', 'README.md', 'bin/svc.js', 'dist/build.json', ...filesUnder('docs').filter((f) => !f.startsWith('docs/screenshots/'))]);
  for (const file of filesUnder('src')) {
    if (file.endsWith('.as.ts') || file.endsWith('/asconfig.json')) continue; // the WASM kernel's build inputs
    if (file.endsWith('.d.ts')) continue; // declarations: tsc emits nothing for them
    files.add(file.replace(/^src\//, 'dist/').replace(/\.ts$/, '.js'));
  }
  return files;
}

/** A Node on PATH (outside this checkout's node_modules) whose major is not 24, to run the bin on. */
function otherNode(path: string): string | undefined {
  for (const dir of path.split(delimiter)) {
    const node = join(dir, 'node');
    if (dir === '' || dir.includes(`node_modules${sep}.bin`) || !existsSync(node)) continue;
    const version = spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout.trim();
    if (/^v\d+\./.test(version) && !version.startsWith('v24.')) return node;
  }
  return undefined;
}

describe('the npm package', { skip: POSIX ? false : 'the install test drives npm and a POSIX bin link', timeout: 600_000 }, () => {
  let work: string;
  let tarball: string;
  let packed: string[];
  let registry: LocalNpmRegistry;
  let prefix: string;
  let installLog = '';
  let svc: string;
  // The Node the installed bin runs on: another major where there is one, else this one.
  let launcher: string;
  let runEnv: NodeJS.ProcessEnv;

  before(async () => {
    work = mkdtempSync(join(tmpdir(), 'svc-package-'));
    const out = execFileSync('npm', ['pack', '--json', '--pack-destination', work], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    const [pack] = JSON.parse(out) as { filename: string; files: { path: string }[] }[];
    tarball = join(work, pack!.filename);
    packed = pack!.files.map((f) => f.path);
    const cache = execFileSync('npm', ['config', 'get', 'cache'], { encoding: 'utf8' }).trim();
    registry = await startLocalNpmRegistry({ lockFile: join(ROOT, 'package-lock.json'), cache });
    prefix = join(work, 'prefix');
    const npmArgs = ['install', '--global', '--prefix', prefix, '--registry', registry.url, '--prefer-offline', '--no-audit', '--no-fund', '--no-update-notifier', tarball];
    // Not spawnSync: the registry answering npm runs on this process's event loop.
    const child = spawn('npm', npmArgs, {
      cwd: work,
      // The `node` package's install script runs npm again for the Node binary: it inherits these.
      env: { ...process.env, npm_config_registry: registry.url, npm_config_prefer_offline: 'true', npm_config_update_notifier: 'false' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d: Buffer) => { output += d.toString(); });
    child.stderr.on('data', (d: Buffer) => { output += d.toString(); });
    const status = await new Promise<number | null>((resolve) => child.once('close', resolve));
    const install = { status, stdout: output, stderr: '' };
    installLog = `${install.stdout}\n${install.stderr}`;
    assert.equal(install.status, 0, `npm install -g failed:\n${installLog}\nasked the local registry for, and not found: ${registry.served.missing.join(' ')}`);
    svc = join(prefix, 'bin', 'svc');
    const path = (process.env.PATH ?? '').split(delimiter).filter((d) => !d.includes(`node_modules${sep}.bin`)).join(delimiter);
    launcher = otherNode(path) ?? process.execPath;
    runEnv = { ...process.env, PATH: path, SVC_GPU: 'cpu', SVC_THREADS: '1', SVC_DISCOVER: 'none' };
  });

  after(async () => {
    await registry?.close();
    if (work !== undefined) rmSync(work, { recursive: true, force: true });
  });

  const run = (args: string[], input?: string) =>
    spawnSync(launcher, [svc, ...args], { cwd: work, env: runEnv, encoding: 'utf8', input, timeout: 60_000 });

  test('npm pack carries exactly its list: compiled JavaScript, assets, bin, docs; no sources, tests or benchmarks', () => {
    const expected = expectedFiles();
    assert.deepEqual(packed.filter((f) => !expected.has(f)), [], 'files in the tarball outside its list');
    assert.deepEqual([...expected].filter((f) => !packed.includes(f)), [], 'files of its list missing from the tarball');
  });

  test('the installed svc prints its version and the packed commit, from any directory', (t) => {
    t.diagnostic(`the installed bin runs on ${launcher} (Node ${spawnSync(launcher, ['--version'], { encoding: 'utf8' }).stdout.trim()})`);
    const commit = svcCommit(ROOT);
    const line = `svc ${SVC_VERSION} (${commit === undefined ? 'commit unknown' : commit.slice(0, 12)})\n`;
    const viaLauncher = run(['--version']);
    assert.equal(viaLauncher.status, 0, viaLauncher.stderr);
    assert.equal(viaLauncher.stdout, line, `run by ${launcher}`);
    // And through the bin link npm made, with whatever `node` PATH names first.
    const linked = spawnSync(svc, ['--version'], { cwd: work, env: { ...runEnv, PATH: `${join(prefix, 'bin')}${delimiter}${runEnv.PATH}` }, encoding: 'utf8' });
    assert.equal(linked.stdout, line, linked.stderr);
  });

  test('the installed svc serves /health and the console, and stops on SIGTERM', async () => {
    const dataDir = join(work, 'data');
    const child = spawn(launcher, [svc, 'serve', '--port', '0', '--data-dir', dataDir], { cwd: work, env: runEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => { stderr += d.toString(); });
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    try {
      const url = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`svc serve did not start in 60 s: ${stderr}`)), 60_000);
        void exited.then((code) => reject(new Error(`svc serve exited with ${code}: ${stderr}`)));
        createInterface({ input: child.stdout }).on('line', (line) => {
          const addresses = (JSON.parse(line) as { addresses?: string[] }).addresses;
          if (addresses !== undefined) {
            clearTimeout(timer);
            resolve(addresses[0]!);
          }
        });
      });
      const health = await fetch(`${url}/health`);
      assert.equal(health.status, 200);
      assert.equal(((await health.json()) as { status: string; version: string }).version, SVC_VERSION);
      const page = await fetch(`${url}/`);
      assert.equal(page.status, 200);
      const html = await page.text();
      const script = /src="\.\/(assets\/[^"]+\.js)"/.exec(html);
      assert.ok(script !== null, 'the console page names its script');
      assert.equal((await fetch(`${url}/${script[1]}`)).status, 200, 'the console assets are in the package');
    } finally {
      child.kill('SIGTERM');
    }
    assert.equal(await exited, 0, `exit code after SIGTERM through the bin; stderr: ${stderr}`);
  });

  test('the installed svc solves on its simulator and lists models', () => {
    const problem = join(work, 'problem.json');
    writeFileSync(problem, JSON.stringify({ solver: 'grover', problem: patternProblem(8, 3) }));
    const solve = run(['solve', '--local', '--seed', '7', '--json', problem]);
    assert.equal(solve.status, 0, solve.stderr);
    assert.equal((JSON.parse(solve.stdout) as { solver: string }).solver, 'grover');
    const models = join(work, 'models-data');
    mkdirSync(models);
    const list = run(['models', 'list', '--json', '--data-dir', models, '--url', 'http://127.0.0.1:9']);
    assert.equal(list.status, 0, list.stderr);
    assert.deepEqual(JSON.parse(list.stdout), [], 'no daemon answers and the data dir holds no model');
    for (const command of ['hosted', 'mcp', 'doctor']) {
      const help = run([command, '--help']);
      assert.equal(help.status, 0, `${command} --help: ${help.stderr}`);
    }
  });
});
