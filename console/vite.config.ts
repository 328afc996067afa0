import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

/**
 * The console's build. Its output is committed under src/console/dist (see docs/console.md):
 * content-hashed asset names so the daemon can mark them immutable, relative URLs (`base: './'`)
 * so the same files work under any prefix, no module-preload polyfill (every browser the console
 * targets has it, and it would be one more script), and no source maps in the committed output.
 */
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: './',
  logLevel: 'warn',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: fileURLToPath(new URL('../src/console/dist', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    modulePreload: { polyfill: false },
    sourcemap: false,
    reportCompressedSize: false,
    // Two pages: the local console (`index.html`, served by `svc serve` at `/`) and the hosted
    // usage page (`usage.html`, served by `svc hosted` at `/api/console/usage`). They share
    // their Preact, uPlot and style chunks.
    rolldownOptions: {
      input: {
        index: fileURLToPath(new URL('./index.html', import.meta.url)),
        usage: fileURLToPath(new URL('./usage.html', import.meta.url)),
      },
    },
  },
});
