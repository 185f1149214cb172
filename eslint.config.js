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

// Core's own rule: pure (no framework, database, model or I/O) and no adapter imports.
const corePurity = [
  {
    group: forbiddenInCore,
    message: 'src/core is pure: no framework, database, model or I/O imports (see STYLE.md).',
  },
  {
    group: ['**/db/**', '**/http/**', '**/realtime/**', '**/jobs/**', '**/llm/**', '**/app/**', '**/config/**'],
    message: 'src/core must not import adapters.',
  },
];

// Core's layers, bottom first: a folder imports only its own layer and those below,
// so no two of core's folders import each other, however indirectly.
const coreLayers = [
  ['errors'],
  ['context'],
  ['limits', 'costs', 'spend'],
  ['domain'],
  ['ports'],
  ['spend-gate'],
  ['dto', 'thread-context'],
  ['saved-memories'],
  ['tools'],
  ['summary'],
  ['admin'],
  ['turn'],
  ['memory'],
  ['fork'],
  ['titles'],
  ['facade'],
  ['erasure'],
];
// Files the layer rule leaves out, each with what must move for it to hold: (none yet).
const coreLayerExceptions = [];

// Every floor but app/ keeps this one (app/ is the composition root).
const noAppImports = {
  regex: '^(\\.\\./)+app(/|$)',
  message:
    'Only src/app (the composition root) imports src/app: take what you need as a port (core/ports: LogPort for the logger).',
};

// Which adapters (and shared floors) may not import which: realtime/ not http/, http/ not db/ or jobs/, and the
// floors both share (auth/, errors/) none of them.
const adapterBoundaries = [
  { folder: 'realtime', forbidden: ['http', 'db', 'jobs', 'llm', 'mcp', 'external'] },
  { folder: 'http', forbidden: ['db', 'jobs', 'realtime', 'llm', 'mcp'] },
  { folder: 'auth', forbidden: ['http', 'realtime', 'db', 'jobs', 'llm', 'mcp', 'external'] },
  { folder: 'errors', forbidden: ['http', 'realtime', 'db', 'jobs', 'llm', 'mcp', 'external'] },
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
    // Functions a reader takes in at once (issue 38): a hand-written function over ~80 lines is split into named
    // steps. A factory returning an object of small methods, or a function that is declarative data (an OpenAPI
    // document), may be longer: an eslint-disable line above it says why. Tests (describe blocks) are exempt.
    files: ['src/**/*.{ts,tsx}', 'web/src/**/*.{ts,tsx}'],
    ignores: ['**/*.test.ts', '**/*.test.tsx', 'src/db/generated/**'],
    rules: { 'max-lines-per-function': ['error', { max: 80, skipBlankLines: true, skipComments: true }] },
  },
  {
    // Every file of the core lives in the folder it serves (the layers below list folders): none at its root.
    files: ['src/core/*.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        { selector: 'Program', message: "src/core's files live in its folders (eslint.config.js lists their layers)." },
      ],
    },
  },
  {
    files: ['src/core/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: corePurity }] },
  },
  // Core's folders (and its loose root files) in layers: each imports only its own layer and the ones below.
  ...coreLayers.map((layer, index) => {
    const above = coreLayers.slice(index + 1).flat();
    return {
      files: layer.map((unit) => (unit.endsWith('.ts') ? `src/core/${unit}` : `src/core/${unit}/**/*.ts`)),
      ignores: coreLayerExceptions,
      rules: {
        'no-restricted-imports': [
          'error',
          {
            patterns: [
              ...corePurity,
              {
                regex: `^${layer.every((unit) => unit.endsWith('.ts')) ? '\\./' : '(\\.\\./){1,2}'}(${above.map((unit) => unit.replace(/\.ts$/, '')).join('|')})(/|$)`,
                message: `Core's folders form no loops: ${layer.join(', ')} may not import a layer above it (${above.join(', ')}); move the shared piece down (eslint.config.js lists the layers).`,
              },
            ],
          },
        ],
      },
    };
  }),
  {
    // The import graph runs one way: app/ (the composition root) imports every floor, no floor imports app/.
    // src/core has its own rule above (which forbids app/ too): a later block's options would replace it.
    files: ['src/**/*.{ts,tsx}'],
    ignores: ['src/app/**', 'src/core/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [noAppImports],
        },
      ],
    },
  },
  // Adapters do not reach into each other: what two of them share lives on a floor below both (auth/, errors/),
  // and they meet only in the composition root (src/app). Each block repeats the app/ rule (options replace).
  ...adapterBoundaries.map(({ folder, forbidden }) => ({
    files: [`src/${folder}/**/*.{ts,tsx}`],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            noAppImports,
            {
              regex: `^(\\.\\./)+(${forbidden.join('|')})(/|$)`,
              message: `src/${folder} may not import src/{${forbidden.join(',')}}: take it as a port, or move what both need to a floor below (auth/, errors/); only src/app wires adapters together.`,
            },
          ],
        },
      ],
    },
  })),
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
