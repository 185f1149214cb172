import { describe, expect, it } from 'vitest';
import { mcpResultText } from './mcp-result-text';

describe('mcpResultText', () => {
  it('keeps text, and shows images and resources as references', () => {
    const { text, isError } = mcpResultText({
      content: [
        { type: 'text', text: 'Here you go.' },
        { type: 'image', mimeType: 'image/png', data: 'AAAA' },
        { type: 'resource_link', uri: 'file:///report.pdf', name: 'report', mimeType: 'application/pdf' },
        { type: 'resource', resource: { uri: 'memo://1', mimeType: 'text/plain', text: 'memo body' } },
        { type: 'resource', resource: { uri: 'blob://2', mimeType: 'application/zip', blob: 'AAAAAAAA' } },
      ],
    });
    expect(isError).toBe(false);
    expect(text).toBe(
      [
        'Here you go.',
        '[image: image/png, 3 bytes, not shown]',
        '[resource link: report <file:///report.pdf> (application/pdf)]',
        '[resource <memo://1> (text/plain)]\nmemo body',
        '[resource <blob://2>: application/zip, 6 bytes, not shown]',
      ].join('\n'),
    );
  });

  it('uses structured content when no text block carries it', () => {
    expect(mcpResultText({ content: [], structuredContent: { temperature: 21 } }).text).toBe(
      '{\n  "temperature": 21\n}',
    );
    expect(
      mcpResultText({ content: [{ type: 'text', text: '{"temperature":21}' }], structuredContent: { temperature: 21 } })
        .text,
    ).toBe('{"temperature":21}');
  });

  it('marks isError results', () => {
    expect(mcpResultText({ content: [{ type: 'text', text: 'no such city' }], isError: true })).toEqual({
      text: 'no such city',
      isError: true,
    });
    expect(mcpResultText({ isError: true }).text).toBe('the tool reported an error without details');
  });
});
