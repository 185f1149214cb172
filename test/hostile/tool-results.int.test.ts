import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_ENCODED_PIECE_CHARS, tokenizerWork } from '../../src/core/context';
import type { MessageDto } from '../../src/shared/api';
import {
  lastUserText,
  replyWithText,
  replyWithToolCalls,
  startOpenAIStub,
  type OpenAIStub,
} from '../support/openai-stub';
import { startTestApp, type TestApp } from '../support/test-app';
import { classifyRequest, lastMessage, responder, threadHelpers, type ThreadHelpers } from '../tools/tool-test-kit';
import { hostileTexts } from './hostile-inputs';

// Issue 33 item 10, the inputs no client types but a tool server returns: an MCP server's result in the worst shapes
// (server-everything's `echo` returns what it was asked to echo, so the model asks it to echo each shape). Each turn
// must end with the model's answer (never INTERNAL: a NUL character, which Postgres text refuses, included), keep
// the result in the transcript, and hand the byte-pair encoder no input over 256 characters while the result is
// condensed and counted into the next pack.

const EVERYTHING = path.resolve(
  import.meta.dirname,
  '../../node_modules/@modelcontextprotocol/server-everything/dist/index.js',
);
const RESULT_CHARS = 32_000;
const shapes = hostileTexts(RESULT_CHARS);
const shapeNames = Object.keys(shapes);

describe('hostile MCP tool results', () => {
  let stub: OpenAIStub;
  let app: TestApp;
  let helpers: ThreadHelpers;

  beforeAll(async () => {
    stub = await startOpenAIStub({
      classifyRequest,
      // Counting 32,000-character prompts in the stub (the test's own process) is not the server's work.
      countPromptTokens: false,
      responder: responder((request) => {
        if (lastMessage(request)?.role === 'tool') return replyWithText('The tool answered.', { omitUsage: true });
        const shape = shapeNames[Number(/^echo shape (\d+)$/.exec(lastUserText(request.body))?.[1])];
        if (shape === undefined) return replyWithText('ok', { omitUsage: true });
        return replyWithToolCalls([{ name: 'everything__echo', arguments: { message: shapes[shape] } }]);
      }),
    });
    app = await startTestApp({
      env: {
        OPENAI_BASE_URL: stub.url,
        MCP_SERVERS: JSON.stringify({
          everything: { command: process.execPath, args: [EVERYTHING, 'stdio'], deny: ['gzip-file-as-resource'] },
        }),
      },
    });
    helpers = await threadHelpers(app);
  });
  afterAll(async () => {
    await app?.stop();
    await stub?.close();
  });

  shapeNames.forEach((shape, index) => {
    it(`ends the turn with the answer when an MCP result is ${RESULT_CHARS.toLocaleString('en')} characters of ${shape}, with bounded work`, async () => {
      tokenizerWork.longestEncoderInput = 0;
      const thread = await helpers.newThread();
      const sent = await helpers.send(thread.id, `echo shape ${index}`);
      expect(sent.turn.status, JSON.stringify(sent.turn)).toBe('complete');
      const messages: MessageDto[] = await helpers.messages(thread.id);
      const toolMessage = messages.find((message) => message.role === 'tool');
      // The result is kept for the people who read the chat (NUL, which Postgres text cannot hold, made visible).
      expect(toolMessage?.content.length ?? 0).toBeGreaterThan(RESULT_CHARS / 2);
      expect(messages.at(-1)).toMatchObject({ role: 'assistant', content: 'The tool answered.' });
      expect(tokenizerWork.longestEncoderInput, 'longest input handed to the encoder').toBeLessThanOrEqual(
        MAX_ENCODED_PIECE_CHARS,
      );
    });
  });
});
