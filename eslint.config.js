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

// Handlers that drop an error: an empty catch block (comments do not count), and a promise's `.catch` handler that
// does nothing (`() => {}`, `() => undefined`, `() => void 0`), whatever its parameter, as `.catch` or `.then`'s second.
const emptyCatchHandler = ':matches(ArrowFunctionExpression, FunctionExpression)';
const swallowedErrors = [
  'CatchClause > BlockStatement.body[body.length=0]',
  `CallExpression[callee.property.name="catch"] > ${emptyCatchHandler}.arguments[body.type="BlockStatement"][body.body.length=0]`,
  `CallExpression[callee.property.name="catch"] > ArrowFunctionExpression.arguments[body.type="Identifier"][body.name="undefined"]`,
  `CallExpression[callee.property.name="catch"] > ArrowFunctionExpression.arguments[body.type="UnaryExpression"][body.operator="void"]`,
  `CallExpression[callee.property.name="then"] > ${emptyCatchHandler}.arguments:nth-child(2)[body.type="BlockStatement"][body.body.length=0]`,
  `CallExpression[callee.property.name="then"] > ArrowFunctionExpression.arguments:nth-child(2)[body.type="Identifier"][body.name="undefined"]`,
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
    // Never swallow an error (STYLE.md): log it or emit it. Where dropping one is right (best-effort cleanup), an
    // eslint-disable comment on the line says why.
    files: ['src/**/*.{ts,tsx}', 'web/**/*.{ts,tsx}'],
    ignores: ['**/*.test.ts', '**/*.test.tsx'],
    rules: {
      'no-restricted-syntax': [
        'error',
        ...swallowedErrors.map((selector) => ({
          selector,
          message:
            'An error is swallowed here: log it (the LogPort / logger) or emit it, or say why with an eslint-disable.',
        })),
      ],
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
