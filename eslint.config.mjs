import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';
import prettierRecommended from 'eslint-plugin-prettier/recommended';
import globals from 'globals';
import jupyterPlugin from '@jupyter/eslint-plugin';

export default defineConfig([
  {
    ignores: [
      'node_modules',
      'dist',
      'coverage',
      'lib',
      'hdsp_agent',
      '**/*.js',
      '**/*.d.ts',
      'ui-tests',
      '.venv',
      'tests'
    ]
  },
  js.configs.recommended,
  tseslint.configs.recommended,
  { plugins: { jupyter: jupyterPlugin } },
  jupyterPlugin.configs.recommended,
  {
    files: ['**/*.ts', '**/*.tsx'],
    languageOptions: {
      globals: {
        ...globals.browser,
        ...globals.es2015,
        ...globals.node
      },
      parserOptions: {
        project: 'tsconfig.test.json',
        sourceType: 'module'
      }
    },
    rules: {
      '@typescript-eslint/naming-convention': [
        'error',
        {
          selector: 'interface',
          format: ['PascalCase'],
          custom: {
            regex: '^I[A-Z]',
            match: true
          }
        }
      ],
      '@typescript-eslint/no-unused-vars': ['warn', { args: 'none' }],
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-namespace': 'off',
      '@typescript-eslint/no-use-before-define': 'off',
      curly: ['error', 'all'],
      eqeqeq: 'error',
      'prefer-arrow-callback': 'error'
    }
  },
  {
    files: ['src/__tests__/**'],
    rules: {
      '@typescript-eslint/no-require-imports': 'off',
      // Fixtures (titles, command ids) are data, not user-facing strings.
      'jupyter/no-untranslated-string': 'off',
      'jupyter/command-described-by': 'off',
      // makeModel() disposes every model after each test.
      'jupyter/require-disposable-ownership': 'off',
      'jupyter/require-disposable-transfer': 'off'
    }
  },
  prettierRecommended
]);
