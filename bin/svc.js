#!/usr/bin/env node
// The `svc` command. It starts on whatever Node runs it (20 or later: a global install links it
// to the system's) and hands over to the CLI on Node 24: in this process when this is Node 24
// already, else in a child process on the Node 24 binary that the `node` package installed with
// svc (docs/offline-install.md). A checkout runs the TypeScript sources (src/); the installed
// package runs their compiled JavaScript (dist/), because Node does not strip types under
// node_modules. Plain JavaScript, no dependencies: this file must run on every Node it may meet.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const NODE_MAJOR = 24;
const root = fileURLToPath(new URL('..', import.meta.url));
const source = join(root, 'src', 'cli', 'main.ts');
const entry = existsSync(source) ? source : join(root, 'dist', 'cli', 'main.js');

/** The Node binary the `node` package installed beside svc (its manifest names it), if there. */
function bundledNode() {
  try {
    const manifestPath = createRequire(import.meta.url).resolve('node/package.json');
    const manifest = JSON.parse(readFileSync(manifestPath, 'utf8'));
    const bin = typeof manifest.bin === 'string' ? manifest.bin : manifest.bin?.node;
    const path = typeof bin === 'string' ? join(dirname(manifestPath), bin) : undefined;
    return path !== undefined && existsSync(path) ? path : undefined;
  } catch {
    return undefined;
  }
}

const major = Number(process.versions.node.split('.')[0]);
const node = major === NODE_MAJOR ? undefined : bundledNode();

if (node === undefined && major >= NODE_MAJOR) {
  await import(pathToFileURL(entry).href);
} else if (node === undefined) {
  process.stderr.write(
    `svc: svc runs on Node ${NODE_MAJOR}, which it installs as the npm package "node", but that package is missing ` +
      `(was svc installed with --ignore-scripts or --omit=optional, or by an npm that blocks dependencies' install scripts?). ` +
      `Reinstall svc letting its dependencies' install scripts run (docs/offline-install.md), or run it with Node ${NODE_MAJOR}.\n`,
  );
  process.exit(1);
} else {
  // Signals sent to this process go on to the CLI. A terminal's Ctrl-C reaches both processes
  // (one process group); the CLI takes a repeat within a second as the same request.
  const child = spawn(node, [entry, ...process.argv.slice(2)], { stdio: 'inherit' });
  const forward = (signal) => child.kill(signal);
  const signals = process.platform === 'win32' ? ['SIGINT', 'SIGTERM', 'SIGBREAK'] : ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT'];
  for (const signal of signals) process.on(signal, forward);
  child.on('error', (error) => {
    process.stderr.write(`svc: could not start Node ${NODE_MAJOR} at ${node}: ${error.message}\n`);
    process.exit(1);
  });
  child.on('exit', (code, signal) => {
    if (signal === null) process.exit(code ?? 1);
    // Die of the same signal, so whoever started svc sees how it ended.
    for (const s of signals) process.off(s, forward);
    process.kill(process.pid, signal);
  });
}
