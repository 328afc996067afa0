import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, beforeEach, test } from 'node:test';
import { listRepoModels, pullModel, type PullEvent, type PullOptions } from '../../src/models/model-pull.ts';
import { parseModelReference } from '../../src/models/model-reference.ts';
import { PullError, type PullErrorCode } from '../../src/models/pull-error.ts';
import { startMockHub, type MockHub } from '../helpers/mock-hub.ts';
import { buildTinyGguf } from '../helpers/tiny-gguf.ts';
import { freePort } from '../helpers/free-port.ts';
import { devFullUnavailable } from '../helpers/dev-full.ts';

const q4 = buildTinyGguf({ seed: 1 });
const q8 = buildTinyGguf({ seed: 2 });
const f16 = buildTinyGguf({ seed: 3 });
const split1 = buildTinyGguf({ seed: 4 });
const split2 = buildTinyGguf({ seed: 5 }); // every part of a split GGUF is a GGUF file
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

let hub: MockHub;
before(async () => {
  hub = await startMockHub({
    token: 'hf_secret_token',
    repos: [
      {
        owner: 'acme', repo: 'Tiny-GGUF', files: {
          'README.md': Buffer.from('# tiny'),
          'tiny-Q4_K_M.gguf': q4,
          'tiny-Q4_K_S.gguf': q8,
          'tiny-Q8_0.gguf': q8,
          'mmproj-tiny-F16.gguf': f16,
          'tiny-F16.gguf': f16,
          'big/tiny-IQ2_XS-00001-of-00002.gguf': split1,
          'big/tiny-IQ2_XS-00002-of-00002.gguf': split2,
        },
      },
      { owner: 'acme', repo: 'single', files: { 'only-model.gguf': q4 } },
      // A hostile listing: paths that would climb out of the repository's folder.
      { owner: 'acme', repo: 'hostile', files: { '../../escape.gguf': q4, 'a/../../b.gguf': q4, 'fine.gguf': q8 } },
      { owner: 'acme', repo: 'private', private: true, files: { 'p-Q4_K_M.gguf': q4 } },
      { owner: 'acme', repo: 'gated', gated: true, files: { 'g.gguf': q4 } },
    ],
  });
  hub.addFile('plain.gguf', q8);
  hub.addFile('page.gguf', Buffer.from('<!DOCTYPE html><html>login required</html>'));
});
after(() => hub.close());
beforeEach(() => {
  Object.assign(hub.faults, { throttleBytesPerSecond: 0, dropAfterBytes: 0, dropTimes: 0, ignoreRange: false, corrupt: false, hideChecksums: false, fileStatus: 0 });
  hub.requests.length = 0;
});

function options(extra: Partial<PullOptions> = {}): PullOptions & { events: PullEvent[] } {
  const events: PullEvent[] = [];
  return { dataDir: mkdtempSync(join(tmpdir(), 'svc-pull-')), hubEndpoint: hub.url, retryDelayMs: 1, onEvent: (e) => events.push(e), events, ...extra };
}

async function pull(reference: string, opts: PullOptions) {
  const ref = parseModelReference(reference, { hubEndpoint: hub.url });
  assert.notEqual(ref.kind, 'hub-repo');
  return pullModel(ref as Exclude<typeof ref, { kind: 'hub-repo' }>, opts);
}

async function pullError(reference: string, opts: PullOptions, code: PullErrorCode): Promise<PullError> {
  try {
    await pull(reference, opts);
  } catch (error) {
    assert.ok(error instanceof PullError, String(error));
    assert.equal(error.code, code, error.message);
    assert.doesNotMatch(error.message, /\n/);
    return error;
  }
  assert.fail(`${reference} should have failed with ${code}`);
}

/** Files under the models folder, relative, sorted. */
function tree(dataDir: string): string[] {
  const root = join(dataDir, 'models');
  return existsSync(root) ? (readdirSync(root, { recursive: true }) as string[]).filter((p) => statSync(join(root, p)).isFile()).sort() : [];
}

test('pull by file: lands under models/hf/<owner>/<repo>, id hf:owner/repo/<name>, sha256 verified, via the CDN redirect', async () => {
  const opts = options({ token: 'hf_secret_token' });
  const result = await pull('hf:acme/Tiny-GGUF/tiny-Q8_0.gguf', opts);
  assert.equal(result.id, 'hf:acme/Tiny-GGUF/tiny-Q8_0');
  assert.equal(result.path, join(opts.dataDir, 'models', 'hf', 'acme', 'Tiny-GGUF', 'tiny-Q8_0.gguf'));
  assert.deepEqual(readFileSync(result.path), q8);
  assert.equal(result.files[0]!.sha256, sha(q8));
  assert.equal(result.files[0]!.verified, true);
  assert.deepEqual(tree(opts.dataDir), ['hf/acme/Tiny-GGUF/tiny-Q8_0.gguf']);
  // The hub's routes, pinned to the commit; the token went to the hub and never to the CDN.
  const paths = hub.requests.map((r) => `${r.server} ${new URL(r.url, 'http://x').pathname}`);
  assert.deepEqual(paths.slice(0, 2), ['hub /api/models/acme/Tiny-GGUF', `hub /api/models/acme/Tiny-GGUF/tree/${hub.commit}`]);
  assert.ok(paths.includes(`hub /acme/Tiny-GGUF/resolve/${hub.commit}/tiny-Q8_0.gguf`));
  assert.ok(paths.some((p) => p.startsWith('cdn /blob/')));
  for (const r of hub.requests) assert.equal(r.headers.authorization, r.server === 'hub' ? 'Bearer hf_secret_token' : undefined);
  // The same name without .gguf is the same file, and it is already there.
  const again = await pull('hf:acme/Tiny-GGUF/tiny-Q8_0', opts);
  assert.equal(again.files[0]!.alreadyPresent, true);
  assert.ok(opts.events.some((e) => e.type === 'file-present'));
});

test('pull by quantization tag: one match, whole-token before substring, none and ambiguous list the candidates', async () => {
  const opts = options();
  assert.equal((await pull('hf:acme/Tiny-GGUF:q8_0', opts)).id, 'hf:acme/Tiny-GGUF/tiny-Q8_0');
  // Q4_K_M is a token of tiny-Q4_K_M only (tiny-Q4_K_S does not contain it); no tag means Q4_K_M.
  assert.equal((await pull('hf:acme/Tiny-GGUF', opts)).id, 'hf:acme/Tiny-GGUF/tiny-Q4_K_M');
  // F16 is the model's, not the vision projector's.
  assert.equal((await pull('hf:acme/Tiny-GGUF:F16', opts)).id, 'hf:acme/Tiny-GGUF/tiny-F16');
  const ambiguous = await pullError('hf:acme/Tiny-GGUF:Q4_K', opts, 'ambiguous');
  assert.match(ambiguous.message, /tiny-Q4_K_M\.gguf, tiny-Q4_K_S\.gguf/);
  const none = await pullError('hf:acme/Tiny-GGUF:Q5_K_M', opts, 'no_match');
  assert.match(none.message, /tiny-Q8_0\.gguf/);
  // A repository with one GGUF and no Q4_K_M: that one.
  assert.equal((await pull('hf:acme/single', opts)).id, 'hf:acme/single/only-model');
});

test('a split model is pulled whole, parts side by side in the repository\'s folder, id without the part suffix', async () => {
  const opts = options();
  const result = await pull('hf:acme/Tiny-GGUF:IQ2_XS', opts);
  assert.equal(result.id, 'hf:acme/Tiny-GGUF/big/tiny-IQ2_XS');
  assert.equal(result.path, join(opts.dataDir, 'models', 'hf', 'acme', 'Tiny-GGUF', 'big', 'tiny-IQ2_XS-00001-of-00002.gguf'));
  assert.deepEqual(tree(opts.dataDir), ['hf/acme/Tiny-GGUF/big/tiny-IQ2_XS-00001-of-00002.gguf', 'hf/acme/Tiny-GGUF/big/tiny-IQ2_XS-00002-of-00002.gguf']);
});

test('owner/repo lists the GGUF models with sizes (split parts grouped, every tree page read)', async () => {
  const listing = await listRepoModels({ owner: 'acme', repo: 'Tiny-GGUF', revision: undefined }, { hubEndpoint: hub.url });
  assert.equal(listing.commit, hub.commit);
  const byPath = new Map(listing.models.map((m) => [m.path, m]));
  assert.deepEqual([...byPath.keys()].sort(), ['big/tiny-IQ2_XS-00001-of-00002.gguf', 'mmproj-tiny-F16.gguf', 'tiny-F16.gguf', 'tiny-Q4_K_M.gguf', 'tiny-Q4_K_S.gguf', 'tiny-Q8_0.gguf']);
  assert.equal(byPath.get('tiny-Q4_K_M.gguf')!.size, q4.length);
  assert.equal(byPath.get('tiny-Q4_K_M.gguf')!.quantization, 'Q4_K_M');
  const split = byPath.get('big/tiny-IQ2_XS-00001-of-00002.gguf')!;
  assert.equal(split.size, split1.length + split2.length);
  assert.equal(split.files.length, 2);
  assert.equal(split.reference, 'hf:acme/Tiny-GGUF/big/tiny-IQ2_XS-00001-of-00002.gguf');
  assert.ok(hub.requests.filter((r) => r.url.includes('/tree/')).length > 2, 'the tree is paginated');
  assert.equal(hub.requests.filter((r) => r.url.includes('/resolve/')).length, 0, 'listing downloads nothing');
});

test('pull by URL: lands in models/ under its file name; a wrong --sha256 is refused', async () => {
  const opts = options();
  const result = await pull(`${hub.cdnUrl}/files/plain.gguf`, opts);
  assert.equal(result.id, 'plain');
  assert.equal(result.path, join(opts.dataDir, 'models', 'plain.gguf'));
  assert.equal(result.files[0]!.verified, false, 'a plain URL publishes no checksum');
  assert.deepEqual(readFileSync(result.path), q8);
  const checked = options({ sha256: sha(q8) });
  assert.equal((await pull(`${hub.cdnUrl}/files/plain.gguf`, checked)).files[0]!.verified, true);
  const wrong = options({ sha256: sha(q4) });
  await pullError(`${hub.cdnUrl}/files/plain.gguf`, wrong, 'checksum_mismatch');
  assert.deepEqual(tree(wrong.dataDir), []);
});

test('a dropped connection is resumed with Range within the run; the sha256 covers every byte', async () => {
  hub.faults.dropAfterBytes = 100_000;
  hub.faults.dropTimes = 2;
  const opts = options();
  const result = await pull('hf:acme/Tiny-GGUF/tiny-Q4_K_M.gguf', opts);
  assert.equal(result.files[0]!.sha256, sha(q4));
  assert.deepEqual(readFileSync(result.path), q4);
  const ranges = hub.requests.filter((r) => r.server === 'cdn').map((r) => r.headers.range);
  assert.equal(ranges.length, 3, 'one request and two resumes');
  assert.equal(ranges[0], undefined);
  // Each resume asks for the rest from what reached the .partial, never from 0: the mock cuts each
  // response after 100,000 bytes, and how many of them the client had written when the socket went
  // depends on timing (a busy machine has been seen to resume twice from 100,000).
  const offsets = ranges.slice(1).map((r) => Number(/^bytes=(\d+)-$/.exec(String(r))?.[1] ?? Number.NaN));
  assert.ok(offsets[0]! > 0 && offsets[0]! <= 100_000, `first resume: ${ranges[1]}`);
  assert.ok(offsets[1]! >= offsets[0]! && offsets[1]! <= offsets[0]! + 100_000, `second resume: ${ranges[2]} after ${ranges[1]}`);
  assert.equal(opts.events.filter((e) => e.type === 'download' && e.progress.phase === 'retrying').length, 2);
});

test('an interrupted pull leaves only the .partial; the next run re-hashes it and asks for the rest', async () => {
  hub.faults.dropAfterBytes = 150_000;
  hub.faults.dropTimes = 1;
  const first = options({ retries: 0 });
  await pullError('hf:acme/Tiny-GGUF/tiny-Q4_K_M.gguf', first, 'network');
  assert.deepEqual(tree(first.dataDir), ['hf/acme/Tiny-GGUF/tiny-Q4_K_M.gguf.partial', 'hf/acme/Tiny-GGUF/tiny-Q4_K_M.gguf.partial.json']);
  hub.requests.length = 0;
  const second = { ...options(), dataDir: first.dataDir };
  const result = await pull('hf:acme/Tiny-GGUF/tiny-Q4_K_M.gguf', second);
  assert.equal(result.files[0]!.resumedFrom, 150_000);
  assert.equal(result.files[0]!.sha256, sha(q4));
  const cdn = hub.requests.filter((r) => r.server === 'cdn');
  assert.deepEqual(cdn.map((r) => r.headers.range), ['bytes=150000-']);
  assert.equal(cdn[0]!.headers['if-range'], `"${sha(q4)}"`);
  assert.ok(second.events.some((e) => e.type === 'download' && e.progress.phase === 'checking'));
  assert.deepEqual(tree(first.dataDir), ['hf/acme/Tiny-GGUF/tiny-Q4_K_M.gguf']);
});

test('a server that ignores Range: the download starts over from its 200 and still verifies', async () => {
  hub.faults.dropAfterBytes = 50_000;
  hub.faults.dropTimes = 1;
  const opts = options({ retries: 0 });
  await pullError('hf:acme/Tiny-GGUF/tiny-Q4_K_M.gguf', opts, 'network');
  hub.faults.ignoreRange = true;
  const again = { ...options(), dataDir: opts.dataDir };
  const result = await pull('hf:acme/Tiny-GGUF/tiny-Q4_K_M.gguf', again);
  assert.equal(result.files[0]!.resumedFrom, 0);
  assert.equal(result.files[0]!.sha256, sha(q4));
  assert.ok(again.events.some((e) => e.type === 'download' && e.progress.phase === 'restarting'));
});

test('a complete partial whose size the source does not publish: 416 means done', async () => {
  const opts = options();
  const dir = join(opts.dataDir, 'models');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'plain.gguf.partial'), q8);
  const result = await pull(`${hub.cdnUrl}/files/plain.gguf`, opts);
  assert.equal(result.files[0]!.resumedFrom, q8.length);
  assert.deepEqual(hub.requests.map((r) => r.headers.range), [`bytes=${q8.length}-`]);
  assert.deepEqual(readFileSync(result.path), q8);
});

test('a partial of a file that changed since (If-Range) is replaced by the new file', async () => {
  hub.addFile('moving.gguf', q4);
  hub.faults.dropAfterBytes = 60_000;
  hub.faults.dropTimes = 1;
  const opts = options({ retries: 0 });
  await pullError(`${hub.cdnUrl}/files/moving.gguf`, opts, 'network');
  hub.addFile('moving.gguf', q8);
  const result = await pull(`${hub.cdnUrl}/files/moving.gguf`, { ...options(), dataDir: opts.dataDir });
  assert.deepEqual(readFileSync(result.path), q8);
});

test('checksum mismatch: the partial is deleted, nothing looks like a model', async () => {
  hub.faults.corrupt = true;
  const opts = options();
  const error = await pullError('hf:acme/Tiny-GGUF/tiny-Q8_0.gguf', opts, 'checksum_mismatch');
  assert.match(error.message, new RegExp(`expected ${sha(q8)}`));
  assert.deepEqual(tree(opts.dataDir), []);
});

test('a mirror without checksums: the download is kept unverified', async () => {
  hub.faults.hideChecksums = true;
  const result = await pull('hf:acme/Tiny-GGUF/tiny-Q8_0.gguf', options());
  assert.equal(result.files[0]!.verified, false);
  assert.deepEqual(readFileSync(result.path), q8);
});

test('404s and refusals: repository, file, revision, private and gated repositories, a non-GGUF body', async () => {
  const opts = options();
  assert.match((await pullError('hf:acme/nope/x.gguf', opts, 'repo_not_found')).message, /repository acme\/nope not found .*HF_TOKEN/);
  assert.match((await pullError('hf:acme/Tiny-GGUF/missing.gguf', opts, 'file_not_found')).message, /missing\.gguf not found in acme\/Tiny-GGUF; its GGUF files: /);
  const rev = parseModelReference('hf:acme/Tiny-GGUF:Q8_0', { hubEndpoint: hub.url, revision: 'v9' });
  await assert.rejects(pullModel(rev as Exclude<typeof rev, { kind: 'hub-repo' }>, opts), (e: unknown) => e instanceof PullError && e.code === 'revision_not_found');
  await pullError('hf:acme/private:Q4_K_M', opts, 'repo_not_found');
  assert.equal((await pull('hf:acme/private:Q4_K_M', { ...opts, token: 'hf_secret_token' })).id, 'hf:acme/private/p-Q4_K_M');
  assert.match((await pullError('hf:acme/gated/g.gguf', opts, 'gated')).message, /accept its terms at .*acme\/gated, then set HF_TOKEN/);
  await pullError(`${hub.cdnUrl}/files/absent.gguf`, opts, 'file_not_found');
  assert.match((await pullError(`${hub.cdnUrl}/files/page.gguf`, opts, 'not_gguf')).message, /starts with "<!DO"/);
  assert.deepEqual(tree(opts.dataDir).filter((p) => !p.startsWith('hf/acme/private/')), []);
});

test('the hub unreachable and a 500 from the CDN are one-line errors', async () => {
  const port = await freePort();
  const down = await pullError('hf:acme/Tiny-GGUF:Q8_0', options({ hubEndpoint: `http://127.0.0.1:${port}` }), 'network');
  assert.equal(down.message, `cannot reach http://127.0.0.1:${port}: ECONNREFUSED`);
  hub.faults.fileStatus = 500;
  await pullError('hf:acme/Tiny-GGUF:Q8_0', options({ retries: 1 }), 'http');
  assert.equal(hub.requests.filter((r) => r.server === 'cdn').length, 2, 'a 5xx is retried');
});

test('disk full (the .partial is a link to /dev/full): ENOSPC is a disk_full error', { skip: devFullUnavailable() }, async () => {
  const opts = options();
  const dir = join(opts.dataDir, 'models', 'hf', 'acme', 'Tiny-GGUF');
  mkdirSync(dir, { recursive: true });
  symlinkSync('/dev/full', join(dir, 'tiny-Q8_0.gguf.partial'));
  const error = await pullError('hf:acme/Tiny-GGUF/tiny-Q8_0.gguf', opts, 'disk_full');
  assert.match(error.message, /disk full while writing .*tiny-Q8_0\.gguf\.partial/);
  assert.equal(existsSync(join(dir, 'tiny-Q8_0.gguf')), false);
});

test('a file already there with another size is kept unless --force', async () => {
  const opts = options();
  const dir = join(opts.dataDir, 'models', 'hf', 'acme', 'Tiny-GGUF');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'tiny-Q8_0.gguf'), 'old');
  assert.match((await pullError('hf:acme/Tiny-GGUF/tiny-Q8_0.gguf', opts, 'exists')).message, /--force/);
  const forced = await pull('hf:acme/Tiny-GGUF/tiny-Q8_0.gguf', { ...opts, force: true });
  assert.deepEqual(readFileSync(forced.path), q8);
});

test('aborting mid-download keeps the partial and places nothing', async () => {
  hub.faults.throttleBytesPerSecond = 200_000;
  const controller = new AbortController();
  const opts = options({
    signal: controller.signal,
    onEvent: (e) => {
      if (e.type === 'download' && e.progress.phase === 'downloading' && e.progress.bytes > 20_000) controller.abort();
    },
  });
  const error = await pullError('hf:acme/Tiny-GGUF/tiny-Q8_0.gguf', opts, 'aborted');
  assert.match(error.message, /run the same command to resume/);
  assert.deepEqual(tree(opts.dataDir), ['hf/acme/Tiny-GGUF/tiny-Q8_0.gguf.partial', 'hf/acme/Tiny-GGUF/tiny-Q8_0.gguf.partial.json']);
});

test('a second pull of the same file while one runs is refused (lock), a stale lock is taken over', async () => {
  const opts = options();
  const dir = join(opts.dataDir, 'models', 'hf', 'acme', 'Tiny-GGUF');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'tiny-Q8_0.gguf.partial.lock'), String(process.ppid));
  assert.match((await pullError('hf:acme/Tiny-GGUF/tiny-Q8_0.gguf', opts, 'busy')).message, new RegExp(`pid ${process.ppid}`));
  writeFileSync(join(dir, 'tiny-Q8_0.gguf.partial.lock'), '999999999');
  await pull('hf:acme/Tiny-GGUF/tiny-Q8_0.gguf', opts);
  assert.deepEqual(tree(opts.dataDir), ['hf/acme/Tiny-GGUF/tiny-Q8_0.gguf']);
});

test('hub paths that would leave the repository folder are ignored', async () => {
  const listing = await listRepoModels({ owner: 'acme', repo: 'hostile', revision: undefined }, { hubEndpoint: hub.url });
  assert.deepEqual(listing.models.map((m) => m.path), ['fine.gguf']);
  const opts = options();
  assert.equal((await pull('hf:acme/hostile', opts)).id, 'hf:acme/hostile/fine');
  assert.deepEqual(tree(opts.dataDir), ['hf/acme/hostile/fine.gguf']);
});

// Root bypasses file modes, so the refusal comes from a file system that takes no new entries.
const sysRefuses = (() => {
  try {
    mkdirSync('/sys/svc-pull-test');
    return false;
  } catch (error) {
    return ['EPERM', 'EACCES', 'EROFS'].includes((error as NodeJS.ErrnoException).code ?? '');
  }
})();

test('a models folder svc may not write: a one-line permission error', { skip: !sysRefuses }, async () => {
  const error = await pullError('hf:acme/Tiny-GGUF/tiny-Q8_0.gguf', { ...options(), dataDir: '/sys/svc-pull-test' }, 'permission');
  assert.match(error.message, /^cannot write \/sys\/svc-pull-test\/models\/hf\/acme\/Tiny-GGUF: (permission denied|read-only file system)$/);
});
