import { describe, expect, it } from 'vitest';
import { deploymentTools } from '../../tools';
import { createTokenCounter } from '../context/token-counter';
import { definitionsForRecallScope } from './built-in/search-transcript';
import { shortToolSchema } from './short-tool-schema';
import { createToolRegistry } from './tool-registry';

const counter = createTokenCounter('o200k_base');

describe('shortToolSchema', () => {
  it("offers the built-in tools in about half the tokens, without the parameters' descriptions", () => {
    const full = createToolRegistry(deploymentTools()).definitions();
    const short = createToolRegistry(deploymentTools().map(shortToolSchema)).definitions();
    expect(short.map((definition) => definition.function.name)).toEqual(
      full.map((definition) => definition.function.name),
    );
    const fullTokens = counter.countToolSchemas(full);
    const shortTokens = counter.countToolSchemas(short);
    // 486 tokens of the demo window's 1,536-token budget before, about half that now.
    expect(shortTokens).toBeLessThan(fullTokens * 0.6);
    expect(JSON.stringify(short.map((definition) => definition.function.parameters))).not.toContain('"description"');
    // The names and types stay: the model can still call each tool right.
    const search = short.find((definition) => definition.function.name === 'search_transcript')!;
    expect(search.function.parameters).toMatchObject({ properties: { query: { type: 'string' } } });
  });

  it('keeps search_transcript short when the recall scope rewrites its description', () => {
    const short = createToolRegistry(deploymentTools().map(shortToolSchema)).definitions();
    const described = (scope: 'user' | 'thread') =>
      definitionsForRecallScope(short, scope).find((definition) => definition.function.name === 'search_transcript')!
        .function.description;
    expect(described('thread')).toBe('Searches earlier messages of this chat only, with their numbers.');
    expect(described('user')).toContain("the user's other chats");
  });

  it('still validates the arguments with the tool schema', async () => {
    const calculator = shortToolSchema(deploymentTools().find((tool) => tool.name === 'calculator')!);
    expect(calculator.schema.safeParse({ expression: '' }).success).toBe(false);
    expect(calculator.description).toMatch(/^Exact arithmetic/);
  });
});
