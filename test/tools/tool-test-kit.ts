import { z } from 'zod';
import { SERVER_NOTE_END, SERVER_NOTE_OPEN } from '../../src/core/context';
import { defineTool, ToolError, type Tool } from '../../src/core/tools';
import type { MessageDto, SendMessageResponseDto, ThreadDto } from '../../src/shared/api';
import type { ThreadEvent } from '../../src/shared/events';
import { wireContentText, type WireChatMessage } from '../../src/llm/count-chat-tokens';
import {
  echoResponder,
  replyWithText,
  type OpenAIStub,
  type StubReply,
  type StubRequest,
  type StubRequestBody,
} from '../support/openai-stub';
import type { TestApp } from '../support/test-app';
import { isContinuedFold } from '../support/summary-stub';

/** Tells chat calls from the summary model's (summaries and tool-result condensing). */
export function classifyRequest(body: StubRequestBody): string {
  const first = body.messages[0];
  const text = first?.role === 'system' ? wireContentText(first.content) : '';
  if (text.startsWith('You condense the output of a tool')) return 'condense';
  // A fold continuing the chat's prompt starts like a chat call: its task is the last message.
  return /running summary/.test(text) || isContinuedFold(body) ? 'summary' : 'chat';
}

export const textOf = (message: WireChatMessage | undefined): string =>
  message ? wireContentText(message.content) : '';
export const lastMessage = (request: StubRequest): WireChatMessage | undefined => request.body.messages.at(-1);

/**
 * Whether a message is one of the server's notes: an async result or notice of the window (user-level text opening
 * with SERVER_NOTE_OPEN), or a per-call system note at a pack's end. A follow-up request ends with one.
 */
export const isServerNote = (message: WireChatMessage | undefined): boolean =>
  message?.role === 'system' || (message?.role === 'user' && textOf(message).startsWith(SERVER_NOTE_OPEN));

/** A server note's text without its label and end marker. */
export const serverNoteText = (message: WireChatMessage | undefined): string =>
  textOf(message).replace(`${SERVER_NOTE_OPEN}\n`, '').replace(`\n${SERVER_NOTE_END}`, '');

/** The texts of a request's server notes (the leading system message excluded). */
export const serverNotesOf = (request: StubRequest): string[] =>
  request.body.messages.filter((message, index) => index > 0 && isServerNote(message)).map(serverNoteText);

/** The condense stub: keeps every ID-n / ORD-n code it sees and says how many characters it read. */
export function condenseReply(request: StubRequest): StubReply {
  const text = request.body.messages.map(textOf).join('\n');
  const codes = [...new Set(text.match(/\b(?:ID|ORD)-\d+\b/g) ?? [])].slice(0, 5);
  return replyWithText(`CONDENSED: ${codes.join(', ') || 'no codes'}.`);
}

/** A responder: condense calls get `condenseReply`, chat calls `chat`. */
export function responder(chat: (request: StubRequest) => StubReply | Promise<StubReply>) {
  return (request: StubRequest) =>
    request.kind === 'condense'
      ? condenseReply(request)
      : request.kind === 'chat'
        ? chat(request)
        : echoResponder(request);
}

/** Every request the stub received was accepted, and every chat prompt fit the budget. */
export function assertRequestsValid(stub: OpenAIStub, budget: number): void {
  const rejected = stub.requests.filter((request) => request.rejection);
  if (rejected.length > 0)
    throw new Error(`stub rejected: ${JSON.stringify(rejected.map((request) => request.rejection))}`);
  const over = stub.requests.filter((request) => request.kind === 'chat' && request.promptTokens > budget);
  if (over.length > 0)
    throw new Error(`over budget: ${over.map((request) => request.promptTokens).join(', ')} > ${budget}`);
}

/** Test tools: each shows one path. */
export function testTools(
  probe: { inlineCalls: { name: string; start: number; end: number }[] } = { inlineCalls: [] },
): Tool[] {
  const wait = (ms: number, signal: AbortSignal) =>
    new Promise<void>((resolve, reject) => {
      const timer = setTimeout(resolve, ms);
      signal.addEventListener(
        'abort',
        () => {
          clearTimeout(timer);
          reject(signal.reason);
        },
        { once: true },
      );
    });
  return [
    defineTool({
      name: 'slow_echo',
      description: 'Echoes its text after a pause.',
      mode: 'inline',
      schema: z.object({ text: z.string(), ms: z.number().int().default(400) }),
      async run({ text, ms }, { signal }) {
        const start = Date.now();
        await wait(ms, signal);
        probe.inlineCalls.push({ name: text, start, end: Date.now() });
        return `echo: ${text}`;
      },
    }),
    defineTool({
      name: 'explode',
      description: 'Always fails.',
      mode: 'inline',
      schema: z.object({}),
      run: async () => {
        throw new Error('connect ECONNREFUSED 10.0.0.7:5432 (flux capacitor database)');
      },
    }),
    defineTool({
      name: 'stuck',
      description: 'Never finishes in time.',
      mode: 'inline',
      timeoutMs: 300,
      schema: z.object({}),
      async run(_args, { signal }) {
        await wait(60_000, signal);
        return 'never';
      },
    }),
    defineTool({
      name: 'big_report',
      description: 'Returns a 200 KB report.',
      mode: 'inline',
      schema: z.object({ note: z.string().optional() }),
      async run() {
        return bigReport();
      },
    }),
    defineTool({
      name: 'big_async_report',
      description: 'Returns a 200 KB report, in the background.',
      mode: 'async',
      schema: z.object({}),
      async run(_args, { reportProgress }) {
        await reportProgress(0.5, 'half way');
        return bigReport();
      },
    }),
    defineTool({
      name: 'slow_async',
      description: 'Waits longer than its time limit.',
      mode: 'async',
      timeoutMs: 400,
      schema: z.object({}),
      async run(_args, { signal }) {
        await wait(60_000, signal);
        return 'never';
      },
    }),
    defineTool({
      name: 'broken_async',
      description: 'Fails in the background.',
      mode: 'async',
      schema: z.object({}),
      async run() {
        throw new ToolError('the archive is corrupt (ID-77)');
      },
    }),
  ];
}

/** 200 KB of numbered lines with codes, and one marker deep inside. */
export function bigReport(): string {
  const lines: string[] = [];
  let length = 0;
  for (let index = 0; length < 200_000; index += 1) {
    const line = `row ${String(index).padStart(5, '0')}: order ORD-${10_000 + index} weighs ${index % 97} kg`;
    lines.push(line);
    length += line.length + 1;
  }
  const text = lines.join('\n').slice(0, 200_000);
  return `${text.slice(0, 150_000)}MARKER-XYZZY${text.slice(150_012)}`;
}

export interface ThreadHelpers {
  token: string;
  newThread(): Promise<ThreadDto>;
  send(threadId: string, content: string): Promise<SendMessageResponseDto>;
  messages(threadId: string): Promise<MessageDto[]>;
  record(threadId: string): ThreadEvent[];
}

export async function threadHelpers(app: TestApp): Promise<ThreadHelpers> {
  const { token } = await app.guest();
  return {
    token,
    newThread: async () =>
      (await (await app.api('/api/threads', { method: 'POST', token, json: {} })).json()) as ThreadDto,
    async send(threadId, content) {
      const response = await app.api(`/api/threads/${threadId}/messages`, { method: 'POST', token, json: { content } });
      if (response.status !== 201) throw new Error(`send failed: ${response.status} ${await response.text()}`);
      return (await response.json()) as SendMessageResponseDto;
    },
    async messages(threadId) {
      const page = (await (await app.api(`/api/threads/${threadId}/messages?limit=200`, { token })).json()) as {
        messages: MessageDto[];
      };
      return page.messages;
    },
    record(threadId) {
      const events: ThreadEvent[] = [];
      app.application.deps.events.subscribe(threadId, (event) => events.push(event));
      return events;
    },
  };
}
