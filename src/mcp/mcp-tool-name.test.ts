import { describe, expect, it } from 'vitest';
import { mcpToolName, OPENAI_TOOL_NAME } from './mcp-tool-name';

describe('mcpToolName', () => {
  it('joins server and tool with a double underscore', () => {
    expect(mcpToolName('everything', 'get-sum')).toBe('everything__get-sum');
  });

  it('maps characters outside [a-zA-Z0-9_-] to _', () => {
    expect(mcpToolName('files', 'read.file/v2 beta')).toBe('files__read_file_v2_beta');
  });

  it('shortens long names to 64 characters with a hash of the full name, keeping two long names apart', () => {
    const long = 'a'.repeat(70);
    const one = mcpToolName('server', `${long}-one`);
    const two = mcpToolName('server', `${long}-two`);
    expect(one).toHaveLength(64);
    expect(one).toMatch(OPENAI_TOOL_NAME);
    expect(one).not.toBe(two);
    expect(one.slice(0, 55)).toBe(two.slice(0, 55));
  });

  it('always yields a name OpenAI accepts', () => {
    for (const tool of ['ü', '名前', 'x'.repeat(200), 'a b c'])
      expect(mcpToolName('s', tool)).toMatch(OPENAI_TOOL_NAME);
  });
});
