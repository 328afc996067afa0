/**
 * Starts `svc serve` as a real child process on port 0 (the way users run it) and reads the
 * bound address from its start-up log line. Each daemon gets its own data directory.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import OpenAI from 'openai';
import { fileURLToPath } from 'node:url';
import { writeTinyGguf } from './tiny-gguf.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const NODE = process.execPath;

export interface DaemonProcess {
  url: string;
  urls: string[];
  port: number;
  child: ChildProcessWithoutNullStreams;
  /** Every JSON log line so far. */
  logs: Record<string, unknown>[];
  stderr: () => string;
  /** Sends SIGTERM and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  exited: Promise<number | null>;
}

/** The shared tiny model fixture (written once per machine; the bytes are deterministic). */
export function tinyModelPath(): string {
  return writeTinyGguf(join(tmpdir(), 'svc-test-fixtures', 'tiny-v1.gguf'));
}

/** The tiny reranker (qwen3 blocks, rank pooling, a two-label classification head; tiny-gguf.ts). */
export function rerankerModelPath(): string {
  return writeTinyGguf(join(tmpdir(), 'svc-test-fixtures', 'tiny-reranker-v1.gguf'), { reranker: true, name: 'svc-tiny-reranker' });
}

/**
 * A variant of the tiny model whose replies end on their own after a few dozen tokens (see
 * TinyGgufOptions.endOfTextWeight), for suites that expect a `completed` reply with no token cap.
 */
export function endingModelPath(): string {
  return writeTinyGguf(join(tmpdir(), 'svc-test-fixtures', 'tiny-ending-v1.gguf'), { endOfTextWeight: 9 });
}

/**
 * A variant that writes é, € and 😀 as their 2, 3 and 4 UTF-8 bytes, one `<0xNN>` token each
 * (TinyGgufOptions.byteCharacters), for tests of text whose characters are split across tokens.
 */
export function byteCharactersModelPath(): string {
  return writeTinyGguf(join(tmpdir(), 'svc-test-fixtures', 'tiny-bytes-v1.gguf'), { byteCharacters: { characters: BYTE_CHARACTERS, weight: 3 } });
}

/** The characters byteCharactersModelPath's model writes as byte tokens (every byte differs). */
export const BYTE_CHARACTERS = 'é€😀';

/**
 * A variant whose replies under `tool_choice: "auto"` often start a call after some text: its
 * vocabulary has node-llama-cpp's call prefix `||call:` as one favoured piece
 * (TinyGgufOptions.extraPieces); the plain fixture never writes `|`.
 */
export function callingModelPath(): string {
  return writeTinyGguf(join(tmpdir(), 'svc-test-fixtures', 'tiny-calling-v1.gguf'), { extraPieces: [{ piece: '||call:', weight: 3 }] });
}

/** `wrap`: a command that runs the CLI as its last arguments (`unshare -rn …`); the CLI's pid is the child's only if it execs. */
export function runCli(args: string[], env: Record<string, string> = {}, wrap: readonly string[] = []): ChildProcessWithoutNullStreams {
  const argv = [NODE, join(ROOT, 'src/cli/main.ts'), ...args];
  return spawn(wrap[0] ?? NODE, [...wrap.slice(1), ...(wrap.length > 0 ? argv : argv.slice(1))], {
    cwd: ROOT,
    // No test sees the real home directory's model stores unless it asks (SVC_DISCOVER).
    env: { ...process.env, SVC_GPU: 'cpu', SVC_THREADS: '1', SVC_DISCOVER: 'none', ...env },
  });
}

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `svc ARGS` to its end; `onSpawn` sees the process first (to signal it, say). */
export async function runCliToEnd(args: string[], env: Record<string, string> = {}, onSpawn?: (child: ChildProcessWithoutNullStreams) => void): Promise<CliRun> {
  const child = runCli(args, env);
  onSpawn?.(child);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => { stdout += d.toString(); });
  child.stderr.on('data', (d: Buffer) => { stderr += d.toString(); });
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  return { code, stdout, stderr };
}

/** The text of a response body from `first` (a chunk already read) to its end. */
export async function readRest(reader: ReadableStreamDefaultReader<Uint8Array>, first: Uint8Array): Promise<string> {
  const decoder = new TextDecoder();
  let text = decoder.decode(first, { stream: true });
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return text + decoder.decode();
    text += decoder.decode(value, { stream: true });
  }
}

/** `dataDir`: use this data dir and keep it after the daemon exits (benches that reuse a filled one); a fresh one removed at exit otherwise. */
export async function startDaemon(options: { args?: string[]; env?: Record<string, string>; withModel?: boolean; wrap?: readonly string[]; onSpawn?: (child: ChildProcessWithoutNullStreams) => void; dataDir?: string } = {}): Promise<DaemonProcess & { dataDir: string }> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'svc-test-'));
  const modelArgs = options.withModel === false ? [] : ['--model', `tiny=${tinyModelPath()}`];
  const daemon = await startServerProcess(['serve', '--port', '0', '--data-dir', dataDir, ...modelArgs, ...(options.args ?? [])], {
    env: options.env,
    wrap: options.wrap,
    onSpawn: options.onSpawn,
    onExit: () => {
      if (options.dataDir === undefined) rmSync(dataDir, { recursive: true, force: true });
    },
  });
  // The daemon's own data dir (removed when it exits unless the caller gave it): where its key files, logs and spaces are.
  return Object.assign(daemon, { dataDir });
}

/** A daemon (as startDaemon starts it) and the official OpenAI client pointed at its /v1, as users point theirs. */
export async function startDaemonWithClient(options: Parameters<typeof startDaemon>[0] = {}): Promise<{ daemon: DaemonProcess; client: OpenAI }> {
  const daemon = await startDaemon(options);
  return { daemon, client: new OpenAI({ baseURL: `${daemon.url}/v1`, apiKey: 'none', maxRetries: 0 }) };
}

/**
 * Runs a server command of the CLI (`svc serve …`, `svc hosted …`) and resolves once its log
 * says where it listens (the line with `addresses`), keeping every JSON log line it writes.
 */
export async function startServerProcess(args: string[], options: { env?: Record<string, string> | undefined; wrap?: readonly string[] | undefined; onSpawn?: ((child: ChildProcessWithoutNullStreams) => void) | undefined; onExit?: () => void } = {}): Promise<DaemonProcess> {
  const child = runCli(args, options.env, options.wrap);
  options.onSpawn?.(child);
  const logs: Record<string, unknown>[] = [];
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => { stderr += d.toString(); });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => {
    options.onExit?.();
    resolve(code);
  }));
  const ready = new Promise<string[]>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`svc ${args[0]} did not start in 30 s; stderr: ${stderr}`)), 30_000);
    createInterface({ input: child.stdout }).on('line', (line) => {
      let entry: Record<string, unknown>;
      try {
        entry = JSON.parse(line) as Record<string, unknown>;
      } catch {
        return;
      }
      logs.push(entry);
      if (Array.isArray(entry.addresses)) {
        clearTimeout(timer);
        resolve(entry.addresses as string[]);
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`svc ${args[0]} exited with ${code} before listening; stderr: ${stderr}`));
    });
  });
  const urls = await ready;
  const url = urls[0]!;
  return {
    url,
    urls,
    port: Number(new URL(url).port),
    child,
    logs,
    stderr: () => stderr,
    exited,
    async stop(signal: NodeJS.Signals = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

/** Polls `/health` until `ready(health)` holds (at most ~10 s); returns the last health body. */
export async function waitForHealth<T = { model: { active: number; waiting: number; loaded: string[] } }>(
  url: string,
  ready: (health: T) => boolean,
): Promise<T> {
  let health = (await (await fetch(`${url}/health`)).json()) as T;
  for (let i = 0; i < 400 && !ready(health); i++) {
    await new Promise((r) => setTimeout(r, 25));
    health = (await (await fetch(`${url}/health`)).json()) as T;
  }
  return health;
}
