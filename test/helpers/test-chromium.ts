/**
 * Which Chromium the browser tests drive: `SVC_TEST_CHROMIUM` when set (a path, or `npm` to force
 * the packaged one), else a Chromium or Chrome the machine has (Debian's /usr/bin/chromium, or
 * `chromium` / `google-chrome` on PATH), else the headless Chromium that the @sparticuz/chromium
 * devDependency ships inside its npm tarball (Linux x64). That last one is why `npm install` alone
 * is enough for `npm test` on a fresh machine: no root, no apt, no download outside the registry.
 */
import { accessSync, constants, createReadStream, createWriteStream, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import { createBrotliDecompress } from 'node:zlib';
import { x as untar } from 'tar';

export interface TestChromium {
  executablePath: string;
  /** Extra environment for the browser process (the packaged binary's own libraries and fonts). */
  env: Record<string, string>;
}

const DEBIAN_CHROMIUM = '/usr/bin/chromium';
const PATH_NAMES = ['chromium', 'google-chrome'];
const CACHE = join(import.meta.dirname, '..', '..', 'node_modules', '.cache', 'svc-test-chromium');

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** A snap's Chromium cannot read the profile Playwright writes under /tmp (the snap is confined), so it is passed over. */
function onPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir === '') continue;
    const candidate = join(dir, name);
    if (executable(candidate) && !realpathSync(candidate).startsWith('/snap/')) return candidate;
  }
  return undefined;
}

/**
 * The package's bin/ holds brotli-packed files: the headless shell, its fonts, SwiftShader, and the
 * NSS/NSPR/expat libraries it links against. The package's own executablePath() unpacks those
 * libraries only on AWS Lambda, and into a fixed /tmp/chromium that any other user could have put
 * there first; here all four go into a per-checkout cache (node_modules/.cache), unpacked into a
 * fresh folder and renamed into place, so two test files starting together never run a half-written
 * binary, and the browser needs nothing from the machine beyond glibc.
 */
async function packagedChromium(): Promise<TestChromium> {
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    throw new Error(`the browser tests need Chromium: none at ${DEBIAN_CHROMIUM} or on PATH, and @sparticuz/chromium ships one for Linux x64 only (this is ${process.platform} ${process.arch}); set SVC_TEST_CHROMIUM to a Chromium or Chrome executable`);
  }
  const packageDir = join(dirname(fileURLToPath(import.meta.resolve('@sparticuz/chromium'))), '..', '..');
  const { version } = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) as { version: string };
  const bin = join(packageDir, 'bin');
  const home = join(CACHE, version);
  if (!existsSync(join(home, 'chromium'))) {
    mkdirSync(CACHE, { recursive: true });
    const staging = mkdtempSync(join(CACHE, `${version}.partial-`));
    try {
      await Promise.all([
        pipeline(createReadStream(join(bin, 'chromium.br')), createBrotliDecompress(), createWriteStream(join(staging, 'chromium'), { mode: 0o755 })),
        // SwiftShader's libraries sit beside the binary, where Chromium looks for them.
        ...[['swiftshader.tar.br', ''], ['fonts.tar.br', 'fonts'], ['al2023.tar.br', 'al2023']].map(([file, folder]) => {
          const cwd = join(staging, folder!);
          mkdirSync(cwd, { recursive: true });
          return untar({ file: join(bin, file!), cwd, brotli: true });
        }),
      ]);
      // The package's fonts.conf names Lambda's folders (/tmp/fonts); this one names its own fonts, then the machine's.
      writeFileSync(join(staging, 'fonts', 'fonts.conf'), [
        '<?xml version="1.0"?>', '<!DOCTYPE fontconfig SYSTEM "fonts.dtd">', '<fontconfig>',
        `  <dir>${join(home, 'fonts', 'fonts')}</dir>`, '  <include ignore_missing="yes">/etc/fonts/fonts.conf</include>',
        `  <cachedir>${join(home, 'fonts-cache')}</cachedir>`, '</fontconfig>', '',
      ].join('\n'));
      renameSync(staging, home);
    } catch (error) {
      rmSync(staging, { recursive: true, force: true });
      // Another test file unpacked the same version first: use its copy.
      if (!existsSync(join(home, 'chromium'))) throw error;
    }
  }
  return {
    executablePath: join(home, 'chromium'),
    env: {
      LD_LIBRARY_PATH: [join(home, 'al2023', 'lib'), process.env.LD_LIBRARY_PATH].filter(Boolean).join(':'),
      FONTCONFIG_PATH: join(home, 'fonts'),
      // The headless shell takes its language from the C locale as is: under LANG=C.UTF-8
      // navigator.language is "en-US@posix", which Intl refuses (Debian's build says "en-US"), and
      // --lang does not change it. One fixed locale also keeps the pages the same on every machine.
      LC_ALL: 'en_US.UTF-8',
    },
  };
}

export async function testChromium(): Promise<TestChromium> {
  const chosen = process.env.SVC_TEST_CHROMIUM;
  if (chosen === 'npm') return packagedChromium();
  if (chosen !== undefined && chosen !== '') {
    if (!executable(chosen)) throw new Error(`SVC_TEST_CHROMIUM=${chosen} is not an executable file; point it at a Chromium or Chrome, or set it to npm for the packaged one`);
    return { executablePath: chosen, env: {} };
  }
  if (executable(DEBIAN_CHROMIUM)) return { executablePath: DEBIAN_CHROMIUM, env: {} };
  for (const name of PATH_NAMES) {
    const found = onPath(name);
    if (found !== undefined) return { executablePath: found, env: {} };
  }
  return packagedChromium();
}
