import { describe, expect, it } from 'vitest';
import { loadEnv } from '../config/env';
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
