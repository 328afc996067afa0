// Lint: typescript-eslint's recommended type-aware rules plus a ban on import cycles,
// so domains stay layered (shared <- inference/quantum/spaces <- runtime/hosted <- cli).
import tseslint from 'typescript-eslint';
import { importX } from 'eslint-plugin-import-x';

export default tseslint.config(
  { ignores: ['node_modules/**', '.svc-test/**', 'bench/.cache/**', 'src/console/dist/**'] },
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
  // import-x stops with EslintPluginImportResolveError on `import ... from 'vite'` in this file
  // (it falls back to a legacy 'node' resolver that is not installed); a build config has no
  // import cycles to find anyway.
  { files: ['console/vite.config.ts'], rules: { 'import-x/no-cycle': 'off' } },
);
