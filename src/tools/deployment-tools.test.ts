import { describe, expect, it } from 'vitest';
import { loadEnv, OPTIONAL_TOOLS } from '../config/env';
import { deploymentTools } from '.';

const names = (tools: ReturnType<typeof deploymentTools>) => tools.map((tool) => tool.name);

describe('SAVE_MEMORY_TOOL', () => {
  it('defaults to confirm, and refuses another value naming the variable', () => {
    expect(loadEnv({ NODE_ENV: 'test' }).SAVE_MEMORY_TOOL).toBe('confirm');
    expect(() => loadEnv({ NODE_ENV: 'test', SAVE_MEMORY_TOOL: 'yes' })).toThrow(/SAVE_MEMORY_TOOL/);
  });

  it('offers save_memory with on and confirm, and not with off', () => {
    expect(names(deploymentTools({ SAVE_MEMORY_TOOL: 'on' }))).toContain('save_memory');
    expect(names(deploymentTools({ SAVE_MEMORY_TOOL: 'confirm' }))).toContain('save_memory');
    const off = names(deploymentTools({ SAVE_MEMORY_TOOL: 'off' }));
    expect(off).not.toContain('save_memory');
    expect(off).toContain('calculator');
  });
});

describe('TOOLS_OFF', () => {
  it('offers every built-in tool by default', () => {
    const env = loadEnv({ NODE_ENV: 'test' });
    expect(env.TOOLS_OFF).toEqual([]);
    expect(names(deploymentTools(env))).toEqual(
      expect.arrayContaining(['calculator', 'current_time', 'analyze_thread', 'search_transcript', 'read_tool_result']),
    );
  });

  it('leaves out the tools it names, and only those', () => {
    const env = loadEnv({ NODE_ENV: 'test', TOOLS_OFF: ' analyze_thread, calculator ' });
    const offered = names(deploymentTools(env));
    expect(offered).not.toContain('analyze_thread');
    expect(offered).not.toContain('calculator');
    expect(offered).toEqual(
      expect.arrayContaining(['current_time', 'search_transcript', 'read_tool_result', 'save_memory']),
    );
  });

  it('names only tools that exist, each of them one it may turn off', () => {
    const all = names(deploymentTools());
    for (const name of OPTIONAL_TOOLS) expect(all).toContain(name);
  });

  it('refuses a name it cannot turn off, naming the variable and the names it takes', () => {
    expect(() => loadEnv({ NODE_ENV: 'test', TOOLS_OFF: 'search_transcript' })).toThrow(
      /TOOLS_OFF.*search_transcript.*calculator, current_time, analyze_thread/s,
    );
    expect(() => loadEnv({ NODE_ENV: 'test', TOOLS_OFF: 'calculater' })).toThrow(/TOOLS_OFF/);
  });
});
