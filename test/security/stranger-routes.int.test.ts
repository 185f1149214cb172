import pg from 'pg';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineTool } from '../../src/core/tools';
import { openApiDocument } from '../../src/http/openapi/openapi-document';
import type { MessageDto, SavedMemoryDto, SendMessageResponseDto, ThreadDto } from '../../src/shared/api';
import {
  echoResponder,
  lastUserText,
  replyWithText,
  replyWithToolCalls,
  startOpenAIStub,
  type OpenAIStub,
} from '../support/openai-stub';
import {
  classifyRoute,
  documented,
  fillPath,
  pathParameters,
  sampleOf,
  servedRoutes,
  type ServedRoute,
} from '../support/route-table';
import { changedTables, databaseSnapshot } from '../support/database-snapshot';
import { startTestApp, type TestApp } from '../support/test-app';
import { classifyRequest } from '../tools/tool-test-kit';
import { waitFor } from '../support/wait-for';

/** The thread a conv_ id names (its hex, dashed back). */
function conversationThreadOf(id: string): string {
  const hex = id.replace(/^conv_/, '');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** A word only user A's data contains: no answer to a stranger may carry it. */
const SECRET = 'zanzibarquokka';

/** The async tool user A's thread runs once, so that A owns a finished tool run. */
const reportTool = defineTool({
  name: 'quick_report',
  description: 'Writes a short report in the background.',
  mode: 'async',
  schema: z.object({}),
  run: async () => `report on ${SECRET}`,
});

const MODEL = 'gpt-4o-mini';

/** Path parameters that name something no user owns. */
const NOT_OWNED = ['models/{model}'];

interface Subject {
  /** Path parameter values (keyed as pathParameters names them), all naming objects of user A. */
  values: Record<string, string>;
  what: string;
}

interface Attempt {
  path: string;
  method: string;
  json?: unknown;
}

/** The rows that mention any of `ids`: one user's part of the database. */
function rowsOf(state: Record<string, string[]>, ids: string[]): Record<string, string[]> {
  return Object.fromEntries(
    Object.entries(state).map(([table, rows]) => [table, rows.filter((row) => ids.some((id) => row.includes(id)))]),
  );
}

/** Builds a request of a route from the OpenAPI document: a smallest valid body, required query parameters. */
function attemptOf(route: ServedRoute, values: Record<string, string>, uuid: string): Attempt {
  const doc = documented(openApiDocument(), route);
  const query = (doc?.requiredQuery ?? []).map((name) => `${name}=${SECRET}`).join('&');
  const path = fillPath(route, values) + (query ? `?${query}` : '');
  const json = doc?.body ? sampleOf(doc.body, { uuid, text: `a stranger writes ${route.name}` }) : undefined;
  return { path, method: route.method, ...(json === undefined ? {} : { json }) };
}

describe("every user route refuses a stranger (built from the app's route table)", () => {
  let stub: OpenAIStub;
  let app: TestApp;
  let owner: { userId: string; token: string };
  let thread: ThreadDto;
  let fork: ThreadDto;
  let subjects: Subject[];
  let ownerIds: string[];

  const send = async (threadId: string, content: string) => {
    const response = await app.api(`/api/threads/${threadId}/messages`, {
      method: 'POST',
      token: owner.token,
      json: { content },
    });
    if (response.status !== 201) throw new Error(`send failed: ${response.status} ${await response.text()}`);
    return (await response.json()) as SendMessageResponseDto;
  };
  const messagesOf = async (threadId: string) =>
    (
      (await (await app.api(`/api/threads/${threadId}/messages?limit=200`, { token: owner.token })).json()) as {
        messages: MessageDto[];
      }
    ).messages;
  const call = (attempt: Attempt, headers: Record<string, string>) =>
    app.api(attempt.path, {
      method: attempt.method,
      headers,
      ...(attempt.json === undefined ? {} : { json: attempt.json }),
    });

  beforeAll(async () => {
    stub = await startOpenAIStub({
      classifyRequest,
      responder: (request) => {
        if (request.kind !== 'chat') return echoResponder(request);
        const last = request.body.messages.at(-1);
        if (last?.role === 'tool') return replyWithText('The report is on its way.');
        if (lastUserText(request.body) === 'write the report')
          return replyWithToolCalls([{ name: 'quick_report', arguments: {} }]);
        return replyWithText(`noted: ${SECRET}`);
      },
    });
    app = await startTestApp({
      env: {
        OPENAI_BASE_URL: stub.url,
        CHAT_MODEL: MODEL,
        SUMMARY_TRIGGER: 'messages=1000',
        AUTH_FAILURE_LIMIT_PER_MINUTE: '100000',
        GUEST_RATE_LIMIT_PER_MINUTE: '100000',
        // The runners' callback routes are live (no runner is ever called here).
        TOOL_WEBHOOK_SECRET: 'a-runner-secret-of-at-least-32-characters',
        PUBLIC_BASE_URL: 'https://chat.example.com/',
        EXTERNAL_TOOLS: JSON.stringify([
          { name: 'render_video', description: 'Renders a video.', mode: 'external', url: 'http://127.0.0.1:9/run' },
        ]),
      },
      tuning: { extraTools: [reportTool] },
    });
    owner = await app.guest();
    thread = (await (
      await app.api('/api/threads', { method: 'POST', token: owner.token, json: { title: `A's ${SECRET}` } })
    ).json()) as ThreadDto;
    await send(thread.id, `my ${SECRET} plans`);
    const started = await send(thread.id, 'write the report');
    const runId =
      started.messages.map((message) => /as run ([0-9a-f-]{36})/.exec(message.content)?.[1]).find(Boolean) ?? '';
    expect(runId).not.toBe('');
    // Quiet before the first snapshot: the run, its follow-up turn and every turn finished.
    await waitFor(
      async () =>
        (await app.application.db.toolRun.findUnique({ where: { id: runId } }))?.status === 'succeeded' &&
        (await app.application.db.turn.count({ where: { threadId: thread.id, status: { not: 'complete' } } })) === 0 &&
        (await app.application.db.turn.count({ where: { threadId: thread.id, kind: 'follow-up' } })) > 0,
      { timeoutMs: 20_000, what: "user A's tool run and its follow-up turn" },
    );
    const [question, answer] = await messagesOf(thread.id);
    if (question?.role !== 'user' || answer?.role !== 'assistant') throw new Error('expected a question and an answer');
    fork = (await (
      await app.api(`/api/threads/${thread.id}/fork`, {
        method: 'POST',
        token: owner.token,
        json: { atMessageId: answer.id },
      })
    ).json()) as ThreadDto;
    const forkAnswer = (await messagesOf(fork.id)).find((message) => message.role === 'assistant');
    const memoryResponse = await app.api('/api/memory', {
      method: 'POST',
      token: owner.token,
      json: { text: `The user's code word is ${SECRET}.` },
    });
    expect(memoryResponse.status).toBe(201);
    const memory = (await memoryResponse.json()) as SavedMemoryDto;
    // A response of the Responses API (/v1/responses/{id}): user A's turn, in a thread of its own.
    const responded = await app.api('/v1/responses', {
      method: 'POST',
      token: owner.token,
      json: { model: MODEL, input: `my ${SECRET} question` },
    });
    expect(responded.status).toBe(200);
    const responseId = ((await responded.json()) as { id: string }).id;
    const responseThread = responded.headers.get('x-chat-thread-id') ?? '';
    // A conversation of the Conversations API (/v1/conversations/{id}): a thread of its own, deleted only by its route.
    const opened = await app.api('/v1/conversations', {
      method: 'POST',
      token: owner.token,
      json: { items: [{ type: 'message', role: 'developer', content: `${SECRET} rules` }] },
    });
    expect(opened.status).toBe(200);
    const conversationId = ((await opened.json()) as { id: string }).id;
    // An item of it (/v1/conversations/{id}/items/{itemId}): its first user message, asked through a response.
    const asked = await app.api('/v1/responses', {
      method: 'POST',
      token: owner.token,
      json: { model: MODEL, input: `my ${SECRET} item`, conversation: conversationId },
    });
    expect(asked.status).toBe(200);
    const itemMessage = (await messagesOf(conversationThreadOf(conversationId))).find((each) => each.role === 'user');
    const itemId = `msg_${(itemMessage?.id ?? '').replace(/-/g, '')}`;
    const shared = {
      // Not an object of a user: every caller may name it.
      'models/{model}': MODEL,
      'tool-runs/{id}': runId,
      'memory/{id}': memory.id,
      'users/{userId}': owner.userId,
      'responses/{id}': responseId,
      'conversations/{id}': conversationId,
      'items/{itemId}': itemId,
    };
    subjects = [
      // Edit and retry take a user's message, the context route an answer: each route is served one of them.
      { what: 'question', values: { ...shared, 'threads/{id}': thread.id, 'messages/{messageId}': question.id } },
      { what: 'answer', values: { ...shared, 'threads/{id}': thread.id, 'messages/{messageId}': answer.id } },
      { what: 'fork', values: { ...shared, 'threads/{id}': fork.id, 'messages/{messageId}': forkAnswer?.id ?? '' } },
    ];
    ownerIds = [owner.userId, thread.id, fork.id, responseThread, conversationThreadOf(conversationId)];
  }, 120_000);
  afterAll(async () => {
    await app?.stop();
    await stub?.close();
  });

  const routesOf = (kind: 'user' | 'runner') =>
    servedRoutes(app.application.app).filter((route) => classifyRoute(route) === kind);
  /** Whether a route names an object of a user in its path (a model's name is not one). */
  const withObjects = (route: ServedRoute) =>
    pathParameters(route.path).some((parameter) => !NOT_OWNED.includes(parameter));

  it('covers the routes that name a user object, and fills every parameter of each', () => {
    const routes = routesOf('user').filter(withObjects);
    expect(routes.length).toBeGreaterThan(20);
    // Throws naming the route when one has a parameter no filler knows.
    for (const route of routes) for (const subject of subjects) fillPath(route, subject.values);
  });

  it("answers a stranger 404 (403 where documented) on every route naming user A's object, and changes nothing", async () => {
    const stranger = await app.guest();
    const problems: string[] = [];
    for (const route of routesOf('user').filter(withObjects)) {
      const allowed = documented(openApiDocument(), route)?.statuses.includes('403') ? [403, 404] : [404];
      for (const subject of subjects) {
        const attempt = attemptOf(route, subject.values, subject.values['messages/{messageId}'] ?? '');
        const before = await databaseSnapshot(app);
        const response = await call(attempt, { Authorization: `Bearer ${stranger.token}` });
        const text = await response.text();
        const after = await databaseSnapshot(app);
        const name = `${route.name} (${subject.what})`;
        if (!allowed.includes(response.status)) problems.push(`${name}: ${response.status} ${text.slice(0, 200)}`);
        if (text.includes(SECRET)) problems.push(`${name}: the answer shows user A's text`);
        const changed = changedTables(before, after);
        if (changed.length > 0) problems.push(`${name}: changed ${changed.join(', ')}`);
      }
    }
    expect(problems).toEqual([]);
  });

  it("answers 401 without credentials on every user route, and a stranger's own routes never reach user A's data", async () => {
    const problems: string[] = [];
    for (const route of routesOf('user')) {
      const attempt = attemptOf(route, subjects[0]!.values, subjects[0]!.values['messages/{messageId}'] ?? '');
      const before = await databaseSnapshot(app);
      const anonymous = await call(attempt, {});
      if (anonymous.status !== 401) problems.push(`${route.name} without credentials: ${anonymous.status}`);
      if (withObjects(route)) continue;
      // A fresh stranger each time: DELETE /api/me erases its caller.
      const stranger = await app.guest();
      const response = await call(attempt, { Authorization: `Bearer ${stranger.token}` });
      const text = await response.text();
      if (text.includes(SECRET) || ownerIds.some((id) => text.includes(id)))
        problems.push(`${route.name}: a stranger's answer shows user A's data`);
      const after = await databaseSnapshot(app);
      if (JSON.stringify(rowsOf(before, ownerIds)) !== JSON.stringify(rowsOf(after, ownerIds)))
        problems.push(`${route.name}: a stranger's call changed user A's rows`);
    }
    expect(problems).toEqual([]);
  });

  it("answers 401 to a runner callback that is not signed (a user's token is no signature), and changes nothing", async () => {
    const routes = routesOf('runner');
    expect(routes.length).toBeGreaterThan(0);
    const problems: string[] = [];
    const stranger = await app.guest();
    for (const route of routes) {
      const attempt = attemptOf(route, subjects[0]!.values, '');
      for (const headers of [{}, { Authorization: `Bearer ${stranger.token}` }] as Record<string, string>[]) {
        const before = await databaseSnapshot(app);
        const response = await call(attempt, headers);
        const after = await databaseSnapshot(app);
        if (response.status !== 401) problems.push(`${route.name}: ${response.status}`);
        if (JSON.stringify(before) !== JSON.stringify(after)) problems.push(`${route.name}: changed the database`);
      }
    }
    expect(problems).toEqual([]);
  });

  /** A new saved-memory proposal of the user (status pending, as save_memory makes under SAVE_MEMORY_TOOL=confirm). */
  const proposalOf = async (token: string): Promise<string> => {
    const created = await app.api('/api/memory', { method: 'POST', token, json: { text: `Proposal ${SECRET}` } });
    const { id } = (await created.json()) as SavedMemoryDto;
    const db = new pg.Client({ connectionString: app.databaseUrl });
    await db.connect();
    await db.query("UPDATE saved_memories SET status = 'pending' WHERE id = $1", [id]);
    await db.end();
    return id;
  };

  it('serves the same requests to user A: the filled objects are real (deletions last)', async () => {
    const depth = (route: ServedRoute) => route.path.split('/').length;
    const routes = routesOf('user')
      .filter(withObjects)
      .sort((a, b) => {
        const deletes = Number(a.method === 'DELETE') - Number(b.method === 'DELETE');
        return deletes !== 0 ? deletes : a.method === 'DELETE' ? depth(b) - depth(a) : 0;
      });
    const problems: string[] = [];
    for (const route of routes) {
      const answers: string[] = [];
      // Served to user A with one of user A's messages (the question, else the answer) in the original thread.
      for (const subject of subjects.slice(0, 2)) {
        // Dismissing ends a proposal: it gets one of its own, so the routes after it still find theirs.
        const values = route.path.endsWith('/dismiss')
          ? { ...subject.values, 'memory/{id}': await proposalOf(owner.token) }
          : subject.values;
        const attempt = attemptOf(route, values, subject.values['messages/{messageId}'] ?? '');
        const response = await call(attempt, { Authorization: `Bearer ${owner.token}` });
        answers.push(`${response.status} ${(await response.text()).slice(0, 200)}`);
        if (![401, 403, 404].includes(response.status)) break;
      }
      if (/^40[134] /.test(answers.at(-1) ?? '')) problems.push(`${route.name}: ${answers.join('; ')}`);
    }
    expect(problems).toEqual([]);
  });
});
