/**
 * Copies the console's current screenshots, which the Chromium tests keep in test-artifacts/ at
 * 1280 and 390 px (keepScreenshots in test/helpers/console-browser.ts), into docs/screenshots/
 * for docs/console.md. Run after the console tests: `npm run docs:screenshots`. The pictures
 * stay out of the npm package (package.json `files`).
 */
import { copyFileSync, existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(import.meta.dirname, '..');
const FROM = join(ROOT, 'test-artifacts');
const TO = join(ROOT, 'docs', 'screenshots');

/** The pictures docs/console.md shows, by the name the tests gave them. */
export const DOC_SCREENSHOTS = [
  'runtime-models', 'chat', 'spaces', 'route-solver', 'portfolio-solver', 'grover-solver',
  'clustering-solver', 'classification-solver', 'hosted-keys', 'hosted-usage', 'navigation-folded',
] as const;

mkdirSync(TO, { recursive: true });
const missing: string[] = [];
for (const name of DOC_SCREENSHOTS) {
  for (const width of [1280, 390]) {
    const file = `console-${name}-${width}.png`;
    if (existsSync(join(FROM, file))) copyFileSync(join(FROM, file), join(TO, file));
    else missing.push(file);
  }
}
if (missing.length > 0) {
  console.error(`not in test-artifacts/ (run the console tests first): ${missing.join(', ')}`);
  process.exitCode = 1;
} else {
  console.log(`${DOC_SCREENSHOTS.length * 2} screenshots copied to docs/screenshots/`);
}
