import { describe, expect, it } from 'vitest';
import { AppError } from '../../core/errors/app-error';
import { CODEX_SUMMARY_OPENING } from './codex-local-summary';
import { parseResponseBody, responseInputOf } from './responses-request';

const inputOf = (input: unknown, options: { continuing?: boolean; maxInstructionsChars?: number } = {}) =>
  responseInputOf(parseResponseBody({ model: 'm', input }), {
    maxInstructionsChars: options.maxInstructionsChars ?? 1000,
    continuing: options.continuing ?? false,
  });

function refusalOf(run: () => unknown): { code: string; field: unknown } {
  try {
    run();
  } catch (error) {
    return { code: (error as AppError).code, field: (error as AppError).details?.field };
  }
  throw new Error('expected a refusal');
}

describe('responseInputOf', () => {
  it('reads a string as one user message', () => {
    expect(inputOf('hi')).toEqual({
      messages: [{ role: 'user', content: 'hi' }],
      instructions: null,
      compaction: null,
      compactionTrigger: false,
      handoff: null,
    });
  });

  it('joins user items in a row into one turn, takes developer and system items out as instructions, drops reasoning', () => {
    expect(
      inputOf([
        { type: 'message', role: 'developer', content: [{ type: 'input_text', text: 'Be terse.' }] },
        { role: 'system', content: 'Use metric units.' },
        { role: 'user', content: [{ type: 'input_text', text: '<environment_context>' }] },
        { role: 'user', content: 'the prompt' },
        { type: 'reasoning', id: 'rs_1', summary: [] },
        { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Looking.' }] },
        { type: 'function_call', call_id: 'call_1', name: 'exec', arguments: '{"cmd":"ls"}' },
        { type: 'function_call', call_id: 'call_2', name: 'run', namespace: 'tools', arguments: '{}' },
        { type: 'function_call_output', call_id: 'call_1', output: 'a.txt' },
        { type: 'function_call_output', call_id: 'call_2', output: [{ type: 'input_text', text: 'ok' }] },
      ]),
    ).toMatchObject({
      instructions: 'Be terse.\n\nUse metric units.',
      messages: [
        { role: 'user', content: '<environment_context>\n\nthe prompt' },
        {
          role: 'assistant',
          content: 'Looking.',
          toolCalls: [
            { id: 'call_1', name: 'exec', arguments: '{"cmd":"ls"}' },
            { id: 'call_2', name: 'tools__run', arguments: '{}' },
          ],
        },
        { role: 'tool', toolCallId: 'call_1', content: 'a.txt' },
        { role: 'tool', toolCallId: 'call_2', content: 'ok' },
      ],
    });
  });

  it('a function call with no assistant message before it is an answer without text', () => {
    expect(
      inputOf([
        { role: 'user', content: 'q' },
        { type: 'function_call', call_id: 'c', name: 'f', arguments: '{}' },
      ]).messages.at(-1),
    ).toEqual({ role: 'assistant', content: '', toolCalls: [{ id: 'c', name: 'f', arguments: '{}' }] });
  });

  it('refuses images, files, unknown items and roles, and results of unknown calls, naming the field', () => {
    expect(
      refusalOf(() =>
        inputOf([
          {
            role: 'user',
            content: [
              { type: 'input_text', text: 'a' },
              { type: 'input_file', file_id: 'f' },
            ],
          },
        ]),
      ),
    ).toEqual({ code: 'VALIDATION', field: 'input.0.content.1.type' });
    expect(
      refusalOf(() =>
        inputOf([
          { role: 'user', content: 'a' },
          { type: 'item_reference', id: 'x' },
        ]),
      ),
    ).toEqual({
      code: 'VALIDATION',
      field: 'input.1.type',
    });
    expect(refusalOf(() => inputOf([{ role: 'tool', content: 'a' }]))).toEqual({
      code: 'VALIDATION',
      field: 'input.0.role',
    });
    expect(refusalOf(() => inputOf([{ type: 'function_call_output', call_id: 'c', output: 'x' }]))).toEqual({
      code: 'VALIDATION',
      field: 'input.0.call_id',
    });
    // Going on from a stored response, a result may answer a call only the server holds.
    expect(
      inputOf([{ type: 'function_call_output', call_id: 'c', output: 'x' }], { continuing: true }).messages,
    ).toEqual([{ role: 'tool', toolCallId: 'c', content: 'x' }]);
    expect(refusalOf(() => inputOf([{ type: 'function_call', name: 'f' }]))).toEqual({
      code: 'VALIDATION',
      field: 'input.0.call_id',
    });
  });

  it('holds the instructions to MAX_CLIENT_INSTRUCTIONS_CHARS (413)', () => {
    const input = [
      { role: 'developer', content: 'x'.repeat(600) },
      { role: 'developer', content: 'y'.repeat(600) },
      { role: 'user', content: 'q' },
    ];
    expect(refusalOf(() => inputOf(input))).toEqual({ code: 'TOO_LARGE', field: 'input' });
    expect(inputOf(input, { maxInstructionsChars: 2000 }).instructions).toHaveLength(1202);
  });

  it('starts over at the last compaction item: the messages before it dropped, the instructions kept', () => {
    const read = inputOf([
      { role: 'developer', content: 'Be terse.' },
      { role: 'user', content: 'old question' },
      { type: 'compaction', encrypted_content: 'first' },
      { role: 'assistant', content: 'old answer' },
      { type: 'compaction', id: 'cmp_1', encrypted_content: 'second' },
      { type: 'function_call_output', call_id: 'held-by-the-thread', output: 'x' },
      { role: 'user', content: 'new question' },
    ]);
    expect(read.instructions).toBe('Be terse.');
    expect(read.compaction).toEqual({ token: 'second', field: 'input.4' });
    expect(read.messages).toEqual([
      { role: 'tool', toolCallId: 'held-by-the-thread', content: 'x' },
      { role: 'user', content: 'new question' },
    ]);
    expect(refusalOf(() => inputOf([{ type: 'compaction' }]))).toEqual({
      code: 'VALIDATION',
      field: 'input.0.encrypted_content',
    });
  });

  it('reads a last compaction_trigger item, and refuses one anywhere else', () => {
    const read = inputOf([{ role: 'user', content: 'q' }, { type: 'compaction_trigger' }]);
    expect(read.compactionTrigger).toBe(true);
    expect(read.messages).toEqual([{ role: 'user', content: 'q' }]);
    expect(refusalOf(() => inputOf([{ type: 'compaction_trigger' }, { role: 'user', content: 'q' }]))).toEqual({
      code: 'VALIDATION',
      field: 'input.0.type',
    });
  });

  it("starts over at Codex's handoff summary (its local compaction's rebuilt history), not joining it to the prompt", () => {
    const read = inputOf([
      { role: 'user', content: '<environment_context>' },
      { role: 'user', content: 'an old prompt' },
      { role: 'user', content: `${CODEX_SUMMARY_OPENING} More of the fixed text.\nThe summary.` },
      { role: 'user', content: 'the new prompt' },
    ]);
    expect(read.handoff).toEqual({ summary: 'The summary.', field: 'input.2' });
    expect(read.messages).toEqual([{ role: 'user', content: 'the new prompt' }]);
  });
});
