// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

// Modules the context core may import: only itself and small pure utilities.
// Frameworks, the database, the model SDKs, the network and the process stay in the adapters.
const forbiddenInCore = [
  'express',
  'socket.io',
  'socket.io-client',
  '@prisma/*',
  'pg',
  '@langchain/*',
  'langchain',
  'bullmq',
  'ioredis',
  'pino',
  '@modelcontextprotocol/*',
  'node:*',
  'fs',
  'path',
  'http',
  'net',
  'child_process',
  'react',
];

export default tseslint.config(
  {
    ignores: [
      'node_modules/**',
      'dist/**',
      'web/dist/**',
      'src/db/generated/**',
      'test-results/**',
      '.data/**',
      'playwright-report/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': 'error',
    },
  },
  {
    files: ['src/core/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: forbiddenInCore,
              message: 'src/core is pure: no framework, database, model or I/O imports (see STYLE.md).',
            },
            {
              group: [
                '**/db/**',
                '**/http/**',
                '**/realtime/**',
                '**/jobs/**',
                '**/llm/**',
                '**/app/**',
                '**/config/**',
              ],
              message: 'src/core must not import adapters.',
            },
          ],
        },
      ],
    },
  },
  {
    // The import graph runs one way: app/ (the composition root) imports every floor, no floor imports app/.
    // src/core has its own rule above (which forbids app/ too): a later block's options would replace it.
    files: ['src/**/*.{ts,tsx}'],
    ignores: ['src/app/**', 'src/core/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^(\\.\\./)+app(/|$)',
              message:
                'Only src/app (the composition root) imports src/app: take what you need as a port (core/ports: LogPort for the logger).',
            },
          ],
        },
      ],
    },
  },
  {
    // The browser app imports only src/shared from the server (types and pure helpers shared with it).
    files: ['web/**/*.{ts,tsx}'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { regex: '(^|/)src/(?!shared(/|$))', message: 'web/ imports only src/shared from the server.' },
            {
              group: [
                'node:*',
                'express',
                'socket.io',
                '@prisma/*',
                'pg',
                'bullmq',
                'ioredis',
                'pino',
                '@langchain/*',
                'langchain',
              ],
              message: 'web/ runs in the browser: no server modules.',
            },
          ],
        },
      ],
    },
  },
  {
    // Tests, scripts, benchmarks and the embedded-service launcher talk to the terminal.
    files: ['test/**', 'bench/**', 'scripts/**', '**/*.test.ts'],
    rules: { 'no-console': 'off' },
  },
);
