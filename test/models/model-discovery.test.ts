import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import {
  discoverModels,
  discoveryRoots,
  parseDiscoverSources,
  type DiscoverableSource,
  type DiscoveryOptions,
  type LocalModel,
} from '../../src/models/model-discovery.ts';
import { huggingFaceModelId, lmStudioModelId, modelIdFromFileName, ollamaModelId } from '../../src/models/model-ids.ts';
import { GgufIndexCache } from '../../src/models/gguf-index-cache.ts';
import { buildGgufFixture } from '../helpers/gguf-fixtures.ts';
import { writeHubFile, writeModelFile, writeOllamaModel } from '../helpers/model-stores.ts';

const ALL = new Set<DiscoverableSource>(['ollama', 'huggingface', 'lmstudio']);
const chatModel = (name: string, fileType = 15) => buildGgufFixture({ architecture: 'llama', name, chatTemplate: '{{x}}', fileType, contextLength: 8192, embeddingLength: 256, sizeLabel: '1B' });

let root: string;
let home: string;
let dataDir: string;
const env = (): NodeJS.ProcessEnv => ({});
let options: (overrides?: Partial<DiscoveryOptions>) => DiscoveryOptions;

/** The fixture machine: every store in its default place under a fake home, each with a few broken things. */
before(() => {
  root = mkdtempSync(join(tmpdir(), 'svc-discovery-'));
  home = join(root, 'home');
  dataDir = join(root, 'svc');
  options = (overrides = {}) => ({ dataDir, sources: ALL, env: env(), homeDir: home, systemOllamaDir: null, indexCache: false, ...overrides });

  // Ollama: library (two tags sharing a blob), a namespace, another registry, an embedding model.
  const ollama = join(home, '.ollama', 'models');
  const llama = chatModel('Llama 3.2 3B');
  writeOllamaModel(ollama, { model: 'llama3.2', tag: '3b' }, llama);
  writeOllamaModel(ollama, { model: 'llama3.2', tag: 'latest' }, llama);
  writeOllamaModel(ollama, { namespace: 'jmorgan', model: 'mine', tag: 'q8' }, chatModel('mine', 7));
  writeOllamaModel(ollama, { host: 'hf.co', namespace: 'bartowski', model: 'Qwen2.5-0.5B-GGUF', tag: 'Q4_K_M' }, buildGgufFixture({ architecture: 'qwen2', fileType: 15, chatTemplate: 't' }));
  const nomic = writeOllamaModel(ollama, { model: 'nomic-embed-text', tag: 'latest' }, buildGgufFixture({ architecture: 'nomic-bert', poolingType: 1, fileType: 1, embeddingLength: 768, contextLength: 2048 }));
  utimesSync(nomic.manifest, new Date('2024-05-01T00:00:00Z'), new Date('2024-05-01T00:00:00Z'));
  // Broken: not JSON; a layer list missing; a blob that is not there; a malformed digest.
  const manifests = join(ollama, 'manifests', 'registry.ollama.ai', 'library');
  mkdirSync(join(manifests, 'broken'), { recursive: true });
  writeFileSync(join(manifests, 'broken', 'latest'), '{"layers": [');
  mkdirSync(join(manifests, 'nolayers'), { recursive: true });
  writeFileSync(join(manifests, 'nolayers', 'latest'), '{"schemaVersion": 2}');
  writeOllamaModel(ollama, { model: 'gone', tag: 'latest' }, chatModel('gone'), { digest: 'f'.repeat(64) });
  rmSync(join(ollama, 'blobs', `sha256-${'f'.repeat(64)}`));
  mkdirSync(join(manifests, 'baddigest'), { recursive: true });
  writeFileSync(join(manifests, 'baddigest', 'latest'), JSON.stringify({ layers: [{ mediaType: 'application/vnd.ollama.image.model', digest: 'sha256:../../etc/passwd' }] }));
  // Not broken, and not served: a cloud model (no weights here) — skipped without a warning.
  mkdirSync(join(manifests, 'gpt-oss'), { recursive: true });
  writeFileSync(join(manifests, 'gpt-oss', '120b-cloud'), JSON.stringify({ layers: [{ mediaType: 'application/vnd.ollama.image.template', digest: `sha256:${'3'.repeat(64)}` }] }));

  // Hugging Face cache in its default place: two snapshots, refs/main naming the newer.
  const hub = join(home, '.cache', 'huggingface', 'hub');
  writeHubFile(hub, 'TheBloke/Foo-GGUF', 'a'.repeat(40), 'foo.Q2_K.gguf', chatModel('old only', 10));
  writeHubFile(hub, 'TheBloke/Foo-GGUF', 'a'.repeat(40), 'foo.Q4_K_M.gguf', chatModel('old revision', 15));
  writeHubFile(hub, 'TheBloke/Foo-GGUF', 'b'.repeat(40), 'foo.Q4_K_M.gguf', chatModel('main revision', 15), { main: true });
  writeHubFile(hub, 'TheBloke/Foo-GGUF', 'b'.repeat(40), 'Q8_0/foo.Q8_0.gguf', chatModel('in a folder', 7));
  // A split model (both parts), a split model missing a part, and a dangling symlink.
  const rev = 'b'.repeat(40);
  writeHubFile(hub, 'org/Big-GGUF', rev, 'big-00001-of-00002.gguf', buildGgufFixture({ split: { no: 0, count: 2 }, tensors: [{ name: 'a', dims: [10, 10] }] }), { main: true });
  writeHubFile(hub, 'org/Big-GGUF', rev, 'big-00002-of-00002.gguf', buildGgufFixture({ split: { no: 1, count: 2 }, tensors: [{ name: 'b', dims: [10, 30] }] }));
  writeHubFile(hub, 'org/Big-GGUF', rev, 'half-00001-of-00002.gguf', buildGgufFixture({ split: { no: 0, count: 2 } }));
  symlinkSync('../../blobs/0000000000000000000000000000000000000000000000000000000000000000', join(hub, 'models--org--Big-GGUF', 'snapshots', rev, 'dangling.gguf'));
  // Datasets and spaces share the cache; they are not models.
  mkdirSync(join(hub, 'datasets--org--data', 'snapshots', rev), { recursive: true });
  writeFileSync(join(hub, 'datasets--org--data', 'snapshots', rev, 'x.gguf'), chatModel('dataset'));

  // LM Studio: a model, its vision projector (not a model: no warning), a truncated file, a
  // text file named .gguf, and an unreadable publisher directory.
  const lms = join(home, '.lmstudio', 'models');
  writeModelFile(join(lms, 'lmstudio-community', 'Meta-Llama-3-8B-Instruct-GGUF', 'Meta-Llama-3-8B-Instruct-Q4_K_M.gguf'), chatModel('Meta Llama 3 8B'));
  writeModelFile(join(lms, 'lmstudio-community', 'Meta-Llama-3-8B-Instruct-GGUF', 'mmproj-model-f16.gguf'), buildGgufFixture({ architecture: 'clip', type: 'mmproj' }));
  writeModelFile(join(lms, 'lmstudio-community', 'Lora-GGUF', 'adapter.gguf'), buildGgufFixture({ architecture: 'llama', type: 'adapter' }));
  const whole = chatModel('cut');
  writeModelFile(join(lms, 'someone', 'Cut-GGUF', 'cut.gguf'), whole.subarray(0, Math.floor(whole.length / 2)));
  writeModelFile(join(lms, 'someone', 'Text-GGUF', 'readme.gguf'), Buffer.from('# not a model\n'));
  writeModelFile(join(lms, 'someone', 'NoArch-GGUF', 'noarch.gguf'), buildGgufFixture({ architecture: null }));
  const locked = join(lms, 'locked');
  if (process.getuid?.() === 0) {
    // root reads through permissions; a symlink loop is a directory no one can read.
    symlinkSync('locked', locked);
  } else {
    mkdirSync(join(locked, 'repo'), { recursive: true });
    chmodSync(locked, 0o000);
  }

  // svc's folder: a top-level model, a broken one, a note, and a pulled hub file whose id the
  // hub cache also gives (svc's copy wins with a warning).
  const models = join(dataDir, 'models');
  writeModelFile(join(models, 'mine.gguf'), chatModel('mine', 0));
  writeModelFile(join(models, 'broken.gguf'), Buffer.from('not a model'));
  writeModelFile(join(models, 'notes.txt'), Buffer.from('hello'));
  writeModelFile(join(models, 'hf', 'TheBloke', 'Foo-GGUF', 'foo.Q4_K_M.gguf'), chatModel('pulled', 15));
  writeModelFile(join(models, 'hf', 'stray.gguf'), chatModel('stray'));
  writeModelFile(join(models, 'partial-download.gguf.partial'), Buffer.from('GGUF'));
});

after(() => {
  if (process.getuid?.() !== 0) chmodSync(join(home, '.lmstudio', 'models', 'locked'), 0o755);
  rmSync(root, { recursive: true, force: true });
});

const byId = (models: LocalModel[]) => new Map(models.map((m) => [m.id, m]));

describe('discovery over a fixture machine', () => {
  test('lists every store with ids as each tool names them, in source order', async () => {
    const { models } = await discoverModels(options());
    assert.deepEqual(models.map((m) => `${m.source} ${m.id}`), [
      'svc hf:TheBloke/Foo-GGUF/foo.Q4_K_M',
      'svc mine',
      'ollama hf.co/bartowski/Qwen2.5-0.5B-GGUF:Q4_K_M',
      'ollama jmorgan/mine:q8',
      'ollama llama3.2:3b',
      'ollama llama3.2:latest',
      'ollama nomic-embed-text:latest',
      'huggingface hf:TheBloke/Foo-GGUF/Q8_0/foo.Q8_0',
      'huggingface hf:TheBloke/Foo-GGUF/foo.Q2_K',
      'huggingface hf:org/Big-GGUF/big',
      'lmstudio lmstudio:lmstudio-community/Meta-Llama-3-8B-Instruct-GGUF/Meta-Llama-3-8B-Instruct-Q4_K_M',
    ]);
  });

  test('one warning per broken thing, naming it', async () => {
    const { warnings } = await discoverModels(options());
    const expected: [RegExp, string][] = [
      [/^svc: broken: .*broken\.gguf: not a GGUF file/, 'non-GGUF file in svc\'s folder'],
      [/^svc: .*hf\/stray\.gguf is not in hf\/<owner>\/<repo>\//, 'misplaced pulled file'],
      [/^ollama: broken:latest: manifest .* is not valid JSON/, 'broken manifest'],
      [/^ollama: nolayers:latest: manifest .* has no list of layers/, 'manifest without layers'],
      [/^ollama: baddigest:latest: manifest .* malformed model digest/, 'malformed digest'],
      [/^ollama: gone:latest: .*sha256-f{64}: missing; skipped/, 'missing blob'],
      [/^huggingface: split model .*half-00001-of-00002\.gguf is missing part half-00002-of-00002\.gguf/, 'incomplete split model'],
      [/^huggingface: hf:org\/Big-GGUF\/dangling: .*dangling\.gguf: dangling symlink/, 'dangling symlink'],
      [/^huggingface: .*has the id of a svc model/, 'collision'],
      [/^lmstudio: lmstudio:someone\/Cut-GGUF\/cut: .*truncated/, 'truncated file'],
      [/^lmstudio: lmstudio:someone\/Text-GGUF\/readme: .*not a GGUF file/, 'text file'],
      [/^lmstudio: lmstudio:someone\/NoArch-GGUF\/noarch: .*no general\.architecture/, 'no architecture'],
      [/^lmstudio: cannot read directory .*locked \((ELOOP|EACCES)\)/, 'unreadable directory'],
    ];
    for (const [pattern, what] of expected) {
      assert.equal(warnings.filter((w) => pattern.test(w)).length, 1, `${what}: exactly one warning matching ${pattern} in\n${warnings.join('\n')}`);
    }
    assert.equal(warnings.length, expected.length, warnings.join('\n'));
  });

  test('metadata: file, size, time and what the header says', async () => {
    const models = byId((await discoverModels(options())).models);
    const llama = models.get('llama3.2:3b')!;
    assert.equal(llama.path, models.get('llama3.2:latest')!.path, 'two tags, one blob');
    assert.match(llama.path, /blobs\/sha256-[0-9a-f]{64}$/);
    assert.equal(llama.gguf.architecture, 'llama');
    assert.equal(llama.gguf.quantization, 'Q4_K_M');
    assert.equal(llama.gguf.hasChatTemplate, true);
    assert.equal(llama.gguf.contextLength, 8192);
    const nomic = models.get('nomic-embed-text:latest')!;
    assert.equal(nomic.gguf.architecture, 'nomic-bert');
    assert.equal(nomic.gguf.poolingType, 1);
    assert.equal(nomic.modifiedMs, Date.parse('2024-05-01T00:00:00Z'), 'Ollama: the manifest\'s time');
    assert.equal(models.get('jmorgan/mine:q8')!.gguf.quantization, 'Q8_0');
    // The hub cache: refs/main's snapshot wins over the older one for the same file; a file only
    // in the older snapshot is still found.
    assert.equal(models.get('hf:TheBloke/Foo-GGUF/foo.Q2_K')!.gguf.name, 'old only');
    const split = models.get('hf:org/Big-GGUF/big')!;
    assert.match(split.path, /big-00001-of-00002\.gguf$/);
    assert.equal(split.gguf.parameterCount, 100 + 300, 'parameters of both parts');
    assert.equal(split.sizeBytes, buildGgufFixture({ split: { no: 0, count: 2 }, tensors: [{ name: 'a', dims: [10, 10] }] }).length
      + buildGgufFixture({ split: { no: 1, count: 2 }, tensors: [{ name: 'b', dims: [10, 30] }] }).length);
    const pulled = models.get('hf:TheBloke/Foo-GGUF/foo.Q4_K_M')!;
    assert.equal(pulled.source, 'svc');
    assert.equal(pulled.gguf.name, 'pulled');
    assert.equal(models.get('mine')!.sizeBytes, chatModel('mine', 0).length);
  });

  test('refs/main decides between snapshots when svc\'s folder does not hold the file', async () => {
    const alone = mkdtempSync(join(tmpdir(), 'svc-discovery-hub-'));
    const hub = join(alone, 'hub');
    writeHubFile(hub, 'o/r', 'c'.repeat(40), 'm.gguf', chatModel('at main'), { main: true });
    writeHubFile(hub, 'o/r', 'd'.repeat(40), 'm.gguf', chatModel('newer but not main'));
    const { models } = await discoverModels(options({ dataDir: join(alone, 'svc'), sources: new Set(['huggingface']), env: { HF_HUB_CACHE: hub } }));
    assert.deepEqual(models.map((m) => [m.id, m.gguf.name]), [['hf:o/r/m', 'at main']]);
    rmSync(alone, { recursive: true, force: true });
  });

  test('each source can be switched off; svc\'s folder is always read', async () => {
    const ids = async (sources: DiscoverableSource[]) =>
      new Set((await discoverModels(options({ sources: new Set(sources) }))).models.map((m) => m.source));
    assert.deepEqual(await ids([]), new Set(['svc']));
    assert.deepEqual(await ids(['ollama']), new Set(['svc', 'ollama']));
    assert.deepEqual(await ids(['huggingface', 'lmstudio']), new Set(['svc', 'huggingface', 'lmstudio']));
    const none = await discoverModels(options({ sources: new Set() }));
    assert.ok(none.warnings.every((w) => w.startsWith('svc: ')), 'no warnings from stores that are off');
  });

  test('an empty machine: no models, no warnings, no error', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'svc-discovery-empty-'));
    const result = await discoverModels(options({ dataDir: join(empty, 'svc'), homeDir: join(empty, 'home') }));
    assert.deepEqual(result, { models: [], warnings: [], headersRead: 0 });
    rmSync(empty, { recursive: true, force: true });
  });
});

describe('the index cache', () => {
  test('a second listing reads no GGUF; a changed file is read again; a corrupt cache is rebuilt', async () => {
    const cold = await discoverModels(options({ indexCache: true }));
    assert.ok(cold.headersRead >= 15, `cold read ${cold.headersRead} headers`);
    const warm = await discoverModels(options({ indexCache: true }));
    assert.equal(warm.headersRead, 0);
    assert.deepEqual(warm.models, cold.models);
    assert.deepEqual(warm.warnings, cold.warnings, 'broken files are remembered too, with the same warning');

    // Replace one file: new size and time, so a new identity.
    const mine = join(dataDir, 'models', 'mine.gguf');
    writeFileSync(mine, buildGgufFixture({ architecture: 'gemma2', fileType: 18 }));
    const changed = await discoverModels(options({ indexCache: true }));
    assert.equal(changed.headersRead, 1);
    assert.equal(byId(changed.models).get('mine')!.gguf.quantization, 'Q6_K');

    writeFileSync(GgufIndexCache.pathIn(dataDir), '{"format": 1, "entries": {"/x": {"identity": 3}}, ');
    const rebuilt = await discoverModels(options({ indexCache: true }));
    assert.equal(rebuilt.headersRead, cold.headersRead);
    assert.equal((await discoverModels(options({ indexCache: true }))).headersRead, 0);
    writeFileSync(mine, chatModel('mine', 0));
  });

  test('a listing with stores switched off keeps their entries; a deleted file\'s entry goes', async () => {
    const own = mkdtempSync(join(tmpdir(), 'svc-discovery-keep-'));
    const ownOptions = (sources: DiscoverableSource[]) => options({ dataDir: join(own, 'svc'), indexCache: true, sources: new Set(sources) });
    writeModelFile(join(own, 'svc', 'models', 'gone-soon.gguf'), chatModel('gone soon'));
    const full = await discoverModels(ownOptions(['ollama', 'lmstudio']));
    assert.ok(full.headersRead > 5);
    assert.equal((await discoverModels(ownOptions([]))).headersRead, 0);
    assert.equal((await discoverModels(ownOptions(['ollama', 'lmstudio']))).headersRead, 0, 'Ollama and LM Studio entries survived the listing without them');
    rmSync(join(own, 'svc', 'models', 'gone-soon.gguf'));
    await discoverModels(ownOptions(['ollama', 'lmstudio']));
    const cached = JSON.parse(readFileSync(GgufIndexCache.pathIn(join(own, 'svc')), 'utf8')) as { entries: Record<string, unknown> };
    assert.ok(!Object.keys(cached.entries).some((file) => file.endsWith('gone-soon.gguf')));
    assert.ok(Object.keys(cached.entries).some((file) => file.includes('.ollama')));
    rmSync(own, { recursive: true, force: true });
  });

  test('an unwritable cache is one warning, and discovery still answers', async () => {
    const blocked = mkdtempSync(join(tmpdir(), 'svc-discovery-nocache-'));
    writeFileSync(join(blocked, 'cache'), 'a file where the cache directory should be');
    const result = await discoverModels(options({ dataDir: blocked, indexCache: true, sources: new Set(['ollama']) }));
    assert.ok(result.models.length > 0);
    assert.equal(result.warnings.filter((w) => /cannot write the model index cache/.test(w)).length, 1);
    rmSync(blocked, { recursive: true, force: true });
  });
});

describe('where the stores are', () => {
  test('defaults under the home directory, and the system Ollama store', () => {
    const roots = discoveryRoots({ env: {}, homeDir: '/h' });
    assert.deepEqual(roots.ollama, ['/h/.ollama/models', '/usr/share/ollama/.ollama/models']);
    assert.deepEqual(roots.huggingface, ['/h/.cache/huggingface/hub']);
    assert.deepEqual(roots.lmstudio, ['/h/.lmstudio/models', '/h/.cache/lm-studio/models']);
  });

  test('environment variables the tools read', () => {
    assert.deepEqual(discoveryRoots({ env: { OLLAMA_MODELS: '/o' }, homeDir: '/h' }).ollama, ['/o']);
    assert.deepEqual(discoveryRoots({ env: { OLLAMA_MODELS: '~/m' }, homeDir: '/h' }).ollama, ['/h/m']);
    assert.deepEqual(discoveryRoots({ env: { HF_HOME: '/hf' }, homeDir: '/h' }).huggingface, ['/hf/hub']);
    assert.deepEqual(discoveryRoots({ env: { XDG_CACHE_HOME: '/x' }, homeDir: '/h' }).huggingface, ['/x/huggingface/hub']);
    assert.deepEqual(discoveryRoots({ env: { HF_HOME: '/hf', HF_HUB_CACHE: '/c' }, homeDir: '/h' }).huggingface, ['/c']);
    assert.deepEqual(discoveryRoots({ env: { HUGGINGFACE_HUB_CACHE: '/old' }, homeDir: '/h' }).huggingface, ['/old']);
    assert.deepEqual(discoveryRoots({ env: {}, homeDir: '/h', systemOllamaDir: null }).ollama, ['/h/.ollama/models']);
  });

  test('OLLAMA_MODELS replaces the default store', async () => {
    const other = mkdtempSync(join(tmpdir(), 'svc-discovery-ollama-'));
    writeOllamaModel(join(other, 'store'), { model: 'phi3', tag: 'mini' }, chatModel('phi3'));
    const { models } = await discoverModels(options({ sources: new Set(['ollama']), env: { OLLAMA_MODELS: join(other, 'store') } }));
    assert.deepEqual(models.filter((m) => m.source === 'ollama').map((m) => m.id), ['phi3:mini']);
    rmSync(other, { recursive: true, force: true });
  });
});

test('--discover values', () => {
  assert.deepEqual(parseDiscoverSources(undefined), ALL);
  assert.deepEqual(parseDiscoverSources(''), ALL);
  assert.deepEqual(parseDiscoverSources('all'), ALL);
  assert.deepEqual(parseDiscoverSources('none'), new Set());
  assert.deepEqual(parseDiscoverSources('Ollama, hf'), new Set(['ollama', 'huggingface']));
  assert.throws(() => parseDiscoverSources('ollama,docker'), /'docker' is not a model source/);
  assert.throws(() => parseDiscoverSources('none,ollama'), /'none' is not a model source/);
});

test('ids', () => {
  assert.equal(ollamaModelId('registry.ollama.ai', 'library', 'llama3.2', '3b'), 'llama3.2:3b');
  assert.equal(ollamaModelId('Registry.Ollama.AI', 'Library', 'llama3.2', 'latest'), 'llama3.2:latest');
  assert.equal(ollamaModelId('registry.ollama.ai', 'jmorgan', 'm', 't'), 'jmorgan/m:t');
  assert.equal(ollamaModelId('hf.co', 'bartowski', 'm', 'Q4_K_M'), 'hf.co/bartowski/m:Q4_K_M');
  assert.equal(modelIdFromFileName('Llama-3.2-1B-Instruct-Q4_K_M.gguf'), 'Llama-3.2-1B-Instruct-Q4_K_M');
  assert.equal(modelIdFromFileName('x.GGUF'), 'x');
  assert.equal(modelIdFromFileName('big-00001-of-00003.gguf'), 'big');
  assert.equal(huggingFaceModelId('o', 'r', 'Q4_K_M/big-00001-of-00002.gguf'), 'hf:o/r/Q4_K_M/big');
  assert.equal(huggingFaceModelId('o', 'r', 'm.gguf'), 'hf:o/r/m');
  assert.equal(lmStudioModelId('pub/repo/file.gguf'), 'lmstudio:pub/repo/file');
});
