import { describe, expect, it } from 'vitest';
import type { AppError } from '../../core/errors/app-error';
import { responseToolsOf, upstreamNameOf } from './response-tools';

describe('responseToolsOf', () => {
  it('passes function tools through, renames namespaced ones, and names the hosted tools it drops', () => {
    const tools = responseToolsOf(
      [
        { type: 'function', name: 'exec', description: 'Runs', parameters: { type: 'object', properties: {} } },
        { type: 'web_search' },
        { type: 'namespace', name: 'crm', description: 'CRM', tools: [{ type: 'function', name: 'find' }] },
        { type: 'code_interpreter', container: 'auto' },
        { type: 'web_search' },
      ] as { type: string }[],
      new Set(['calculator']),
    );
    expect(tools.tools.map((tool) => tool.function.name)).toEqual(['exec', 'crm__find']);
    expect(tools.tools[1]?.function.parameters).toEqual({ type: 'object', properties: {} });
    expect(tools.ignored).toEqual(['web_search', 'code_interpreter']);
    expect(tools.names.get('crm__find')).toEqual({ name: 'find', namespace: 'crm' });
  });

  it('keeps namespaced names within the upstream 64 characters, distinct', () => {
    const long = upstreamNameOf('n'.repeat(40), 'a'.repeat(40));
    expect(long.length).toBeLessThanOrEqual(64);
    expect(long).not.toBe(upstreamNameOf('n'.repeat(40), `${'a'.repeat(39)}b`));
    expect(long).toMatch(/^[A-Za-z0-9_-]+$/);
  });

  it("refuses a tool offered twice, or named like one of the server's, naming it", () => {
    const fieldOf = (tools: object[]) => {
      try {
        responseToolsOf(tools as { type: string }[], new Set(['calculator']));
      } catch (error) {
        return (error as AppError).details?.field;
      }
      return null;
    };
    expect(fieldOf([{ type: 'function', name: 'calculator' }])).toBe('tools.0.name');
    expect(
      fieldOf([
        { type: 'function', name: 'crm__find' },
        { type: 'namespace', name: 'crm', tools: [{ type: 'function', name: 'find' }] },
      ]),
    ).toBe('tools.1.tools.0.name');
  });
});
