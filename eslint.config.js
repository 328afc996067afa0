// Lint: typescript-eslint's recommended type-aware rules plus a ban on import cycles,
// so domains stay layered (shared <- inference/quantum/spaces <- runtime/hosted <- cli).
import tseslint from 'typescript-eslint';
import { importX } from 'eslint-plugin-import-x';

export default tseslint.config(
  { ignores: ['node_modules/**', 'dist/**', '.svc-test/**', 'bench/.cache/**', 'src/console/dist/**', 'src/**/*.as.ts'] },
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    plugins: { 'import-x': importX },
    rules: {
      'import-x/no-cycle': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
    },
  },
  // import-x/no-cycle follows `import ... from 'vite'` into vite's package, and there its legacy
  // resolver lookup loads the npm package `node` (the Node binary this project pins) as a resolver
  // and stops with EslintPluginImportResolveError. The files that import vite are a build config
  // and a test: no import cycles of ours to find there.
  { files: ['console/vite.config.ts', 'test/console/console-build.test.ts'], rules: { 'import-x/no-cycle': 'off' } },
);
