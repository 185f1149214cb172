import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createTokenCounter } from '../context';
import { calculatorTool } from './built-in/calculator';
import { readToolResultTool } from './built-in/read-tool-result';
import { silentLog } from '../../../test/fakes/summary-use-case-fakes';
import { executeTool } from './execute-tool';
import { createToolRegistry } from './tool-registry';
import { defineTool, type ToolContext } from './types';

const counter = createTokenCounter('o200k_base');
const context: Omit<ToolContext, 'signal'> = {
  threadId: 't',
  runId: null,
  reportProgress: async () => undefined,
  counter,
  inlineTokens: 200,
  now: () => new Date('2026-01-02T03:04:05Z'),
  services: {
    readStoredResult: async () => ({
      name: 'report',
      text: Array.from({ length: 2000 }, (_, index) => `row ${index}`)
        .join(' ')
        .slice(0, 10_000),
    }),
    listTranscript: async () => [],
    search: { searchForModel: async () => [], messagesAt: async () => [] },
  },
};

const sleepy = defineTool({
  name: 'sleepy',
  description: 'waits',
  mode: 'inline',
  schema: z.object({}),
  run: (_args, { signal }) =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => resolve('woke'), 10_000);
      signal.addEventListener('abort', () => {
        clearTimeout(timer);
        reject(signal.reason);
      });
    }),
});
const stubborn = defineTool({
  name: 'stubborn',
  description: 'ignores its signal',
  mode: 'inline',
  schema: z.object({}),
  run: () => new Promise(() => undefined),
});
const broken = defineTool({
  name: 'broken',
  description: 'throws',
  mode: 'inline',
  schema: z.object({}),
  run: async () => {
    throw new Error('disk on fire');
  },
});

const configured = (name: string, server = 'srv', size = 1) =>
  defineTool({
    name,
    description: `tool ${name} ${'x'.repeat(size)}`,
    mode: 'inline',
    schema: z.object({}),
    parameters: { type: 'object', properties: { q: { type: 'string' } } },
    source: { kind: 'mcp', server, tool: name.split('__')[1] ?? name },
    run: async () => 'ok',
  });

describe('configured tool groups', () => {
  it('adds and replaces a group, offering its own JSON schema', () => {
    const registry = createToolRegistry([calculatorTool]);
    registry.setGroup('mcp:srv', [configured('srv__a'), configured('srv__b')]);
    expect(registry.definitions().map((definition) => definition.function.name)).toEqual([
      'calculator',
      'srv__a',
      'srv__b',
    ]);
    expect(registry.definitions()[1]?.function.parameters).toEqual({
      type: 'object',
      properties: { q: { type: 'string' } },
    });
    registry.setGroup('mcp:srv', [configured('srv__c')]);
    expect(registry.definitions().map((definition) => definition.function.name)).toEqual(['calculator', 'srv__c']);
    expect(registry.get('srv__a')).toBeUndefined();
  });

  it('refuses a name another group holds: at start it throws naming both, later it leaves the newcomer out', () => {
    const registry = createToolRegistry([calculatorTool]);
    expect(() => registry.setGroup('mcp:one', [configured('calculator', 'one')], { strict: true })).toThrow(
      'Tool name calculator is claimed twice: by a built-in tool and by MCP server one (its tool "calculator")',
    );
    registry.setGroup('mcp:one', [configured('shared', 'one')]);
    const { refused } = registry.setGroup('mcp:two', [configured('shared', 'two'), configured('two__own', 'two')]);
    expect(refused).toEqual([
      'Tool name shared is claimed twice: by MCP server one (its tool "shared") and by MCP server two (its tool "shared")',
    ]);
    expect(registry.definitions().map((definition) => definition.function.name)).toEqual([
      'calculator',
      'shared',
      'two__own',
    ]);
  });

  it('offers configured tools within the schema token cap, in order; built-ins are always offered', () => {
    const cap = {
      maxTokens: 0,
      count: (definition: { function: { description: string } }) => definition.function.description.length,
    };
    cap.maxTokens = 2 * 'tool srv__a x'.length + 1;
    const registry = createToolRegistry([calculatorTool], cap);
    registry.setGroup('mcp:srv', [configured('srv__a'), configured('srv__b'), configured('srv__c')]);
    expect(registry.definitions().map((definition) => definition.function.name)).toEqual([
      'calculator',
      'srv__a',
      'srv__b',
    ]);
    expect(registry.describe().map((entry) => [entry.tool.name, entry.offered])).toEqual([
      ['calculator', true],
      ['srv__a', true],
      ['srv__b', true],
      ['srv__c', false],
    ]);
  });
});

describe('createToolRegistry', () => {
  it('offers OpenAI function definitions converted from the zod schemas', () => {
    const registry = createToolRegistry([calculatorTool, readToolResultTool]);
    const [calculator, reader] = registry.definitions();
    expect(calculator).toEqual({
      type: 'function',
      function: {
        name: 'calculator',
        description: calculatorTool.description,
        parameters: expect.objectContaining({
          type: 'object',
          required: ['expression'],
          properties: { expression: expect.objectContaining({ type: 'string' }) },
        }),
      },
    });
    expect(calculator?.function.parameters).not.toHaveProperty('$schema');
    // Arguments with defaults are optional for the model.
    expect(reader?.function.parameters.required).toEqual(['handle']);
  });

  it('refuses duplicate and invalid names', () => {
    expect(() => createToolRegistry([calculatorTool, calculatorTool])).toThrow('registered twice');
    expect(() => createToolRegistry([{ ...calculatorTool, name: 'bad name' }])).toThrow('must match');
  });
});

describe('executeTool', () => {
  const registry = createToolRegistry([calculatorTool, sleepy, stubborn, broken, readToolResultTool]);
  const run = (name: string, args: Record<string, unknown>, timeoutMs = 1000, signal?: AbortSignal) =>
    executeTool({ registry, call: { name, args }, context, timeoutMs, log: silentLog, ...(signal ? { signal } : {}) });

  it('runs a tool', async () => {
    expect(await run('calculator', { expression: '6 * 7' })).toEqual({ status: 'succeeded', text: '6 * 7 = 42' });
  });

  it('turns bad arguments, unknown tools and exceptions into results the model can act on', async () => {
    const invalid = await run('calculator', { expresion: '1' });
    expect(invalid.status).toBe('failed');
    expect(invalid.text).toMatch(/^Error: Invalid arguments for calculator: expression:/);
    expect((await run('nope', {})).text).toContain('There is no tool named nope. Available tools: calculator');
    expect((await run('calculator', { expression: '1/0' })).text).toBe('Error: calculator failed: Division by zero');
    const internal = await run('broken', {});
    // An internal exception: a generic line with a reference, never its message.
    expect(internal.text).toMatch(
      /^Error: broken failed: an internal error \(reference [0-9a-f]{8}; the details are in the server log\)$/,
    );
    expect(internal.status === 'failed' && internal.error).not.toContain('disk on fire');
  });

  it('stops a tool at its time limit, even one that ignores its signal', async () => {
    const timed = await run('sleepy', {}, 50);
    expect(timed).toMatchObject({ status: 'timed_out', error: 'sleepy did not finish within 50 ms and was stopped.' });
    expect((await run('stubborn', {}, 50)).status).toBe('timed_out');
  });

  it('reports a cancel from the caller', async () => {
    const controller = new AbortController();
    const pending = run('sleepy', {}, 5000, controller.signal);
    controller.abort(new Error('user cancelled'));
    expect(await pending).toMatchObject({ status: 'cancelled', error: 'user cancelled' });
  });

  it('read_tool_result returns a slice that fits the inline size and says where to continue', async () => {
    const outcome = await run('read_tool_result', {
      handle: '00000000-0000-4000-8000-000000000000',
      offset: 100,
      length: 20_000,
    });
    expect(outcome.status).toBe('succeeded');
    expect(counter.countText(outcome.text)).toBeLessThanOrEqual(200);
    const match = /Characters 100–(\d+) of 10000/.exec(outcome.text);
    expect(match).not.toBeNull();
    expect(outcome.text).toContain(`offset=${match?.[1]}`);
  });
});
