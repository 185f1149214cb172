import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OpenApiDocument } from '../../src/http/openapi/openapi-document';
import type { ModelCallListDto, RegenerateResponseDto, SendMessageResponseDto, ThreadDto } from '../../src/shared/api';
import { expressRoutes } from '../support/express-routes';
import { startOpenAIStub, type OpenAIStub } from '../support/openai-stub';
import { responseProblems } from '../support/openapi-check';
import { classifyRequest, summaryResponder } from '../support/summary-stub';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';

const ADMIN_TOKEN = 'test-admin-token-0123456789';
const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

describe('the OpenAPI document', () => {
  let stub: OpenAIStub;
  let app: TestApp;
  let document: OpenApiDocument;

  beforeAll(async () => {
    stub = await startOpenAIStub({ classifyRequest, responder: summaryResponder() });
    app = await startTestApp({
      env: { OPENAI_BASE_URL: stub.url, SUMMARY_TRIGGER: 'messages=4', SUMMARY_KEEP: 'messages=2' },
    });
    const response = await app.api('/api/openapi.json');
    expect(response.status).toBe(200);
    document = (await response.json()) as OpenApiDocument;
  });
  afterAll(async () => {
    await app?.stop();
    await stub?.close();
  });

  it('is OpenAPI 3.1 and served without auth', () => {
    expect(document.openapi).toBe('3.1.0');
    expect(Object.keys(document.components?.schemas ?? {})).toEqual(
      expect.arrayContaining(['Thread', 'Message', 'AdminThread', 'SummaryRevision']),
    );
  });

  it('documents exactly the routes the express app serves', () => {
    const served = expressRoutes(app.application.app, { exclude: ['/admin/jobs'] });
    const documented = Object.entries(document.paths ?? {})
      .flatMap(([path, item]) =>
        METHODS.filter((method) => method in (item as object)).map((method) => `${method.toUpperCase()} ${path}`),
      )
      .sort();
    expect(served.length).toBeGreaterThan(20);
    expect({
      undocumented: served.filter((route) => !documented.includes(route)),
      notServed: documented.filter((route) => !served.includes(route)),
    }).toEqual({ undocumented: [], notServed: [] });
  });

  it('describes the real responses of the user API', async () => {
    const problems: string[] = [];
    const check = async (method: string, path: string, response: Response) =>
      problems.push(...(await responseProblems(document, { method, path }, response)));

    await check('get', '/healthz', await app.api('/healthz'));
    await check('get', '/readyz', await app.api('/readyz'));
    await check('get', '/api/info', await app.api('/api/info'));
    const guestResponse = await app.api('/api/auth/guest', { method: 'POST' });
    const { token } = (await guestResponse.clone().json()) as { token: string };
    await check('post', '/api/auth/guest', guestResponse);
    await check('post', '/api/auth/refresh', await app.api('/api/auth/refresh', { method: 'POST', token }));
    await check('get', '/api/threads', await app.api('/api/threads'));

    const created = await app.api('/api/threads', { method: 'POST', token, json: { title: 'documented' } });
    const thread = (await created.clone().json()) as ThreadDto;
    await check('post', '/api/threads', created);
    await check('post', '/api/threads', await app.api('/api/threads', { method: 'POST', token, json: { title: 7 } }));
    await check(
      'patch',
      '/api/threads/{id}',
      await app.api(`/api/threads/${thread.id}`, { method: 'PATCH', token, json: { title: 'renamed' } }),
    );
    let sent: SendMessageResponseDto | undefined;
    for (let turn = 1; turn <= 3; turn += 1) {
      const response = await app.api(`/api/threads/${thread.id}/messages`, {
        method: 'POST',
        token,
        json: { content: `hello ${turn}`, clientMessageId: `c-${turn}` },
      });
      sent = (await response.clone().json()) as SendMessageResponseDto;
      await check('post', '/api/threads/{id}/messages', response);
    }
    await check(
      'post',
      '/api/threads/{id}/messages',
      await app.api(`/api/threads/${thread.id}/messages`, {
        method: 'POST',
        token,
        json: { content: 'hello 3', clientMessageId: 'c-3' },
      }),
    );
    await check(
      'post',
      '/api/threads/{id}/messages',
      await app.api(`/api/threads/${thread.id}/messages`, { method: 'POST', token, json: { content: '' } }),
    );
    await check(
      'post',
      '/api/threads/{id}/messages/{messageId}/retry',
      await app.api(`/api/threads/${thread.id}/messages/${sent?.userMessage.id}/retry`, { method: 'POST', token }),
    );
    await check('get', '/api/threads', await app.api('/api/threads?limit=1', { token }));
    await check('get', '/api/threads/{id}', await app.api(`/api/threads/${thread.id}`, { token }));
    await check(
      'get',
      '/api/threads/{id}',
      await app.api('/api/threads/00000000-0000-4000-8000-000000000000', { token }),
    );
    await check(
      'get',
      '/api/threads/{id}/messages',
      await app.api(`/api/threads/${thread.id}/messages?limit=2`, { token }),
    );
    await check('get', '/api/threads/{id}/context', await app.api(`/api/threads/${thread.id}/context`, { token }));
    await check(
      'post',
      '/api/threads/{id}/cancel',
      await app.api(`/api/threads/${thread.id}/cancel`, { method: 'POST', token }),
    );
    await check('get', '/api/search', await app.api('/api/search?q=hello&limit=1', { token }));
    await check('get', '/api/search', await app.api('/api/search?q=', { token }));
    await check(
      'get',
      '/api/threads/{id}/search',
      await app.api(`/api/threads/${thread.id}/search?q=hello`, { token }),
    );
    await check(
      'get',
      '/api/threads/{id}/search',
      await app.api(`/api/threads/${thread.id}/search?q=hello&cursor=nope`, { token }),
    );
    const forked = await app.api(`/api/threads/${thread.id}/fork`, {
      method: 'POST',
      token,
      json: { atMessageId: sent?.userMessage.id },
    });
    expect(forked.status).toBe(201);
    await check('post', '/api/threads/{id}/fork', forked);
    await check(
      'post',
      '/api/threads/{id}/fork',
      await app.api(`/api/threads/${thread.id}/fork`, { method: 'POST', token, json: { atMessageId: 'nope' } }),
    );
    await check('get', '/api/threads/{id}/forks', await app.api(`/api/threads/${thread.id}/forks`, { token }));
    const edited = await app.api(`/api/threads/${thread.id}/messages/${sent?.userMessage.id}/edit`, {
      method: 'POST',
      token,
      json: { content: 'hello again', clientMessageId: 'e-1' },
    });
    expect(edited.status).toBe(201);
    await check('post', '/api/threads/{id}/messages/{messageId}/edit', edited);
    await check(
      'post',
      '/api/threads/{id}/messages/{messageId}/edit',
      await app.api(`/api/threads/${thread.id}/messages/${sent?.userMessage.id}/edit`, {
        method: 'POST',
        token,
        json: { content: 'hello again', clientMessageId: 'e-1' },
      }),
    );
    await check(
      'post',
      '/api/threads/{id}/messages/{messageId}/edit',
      await app.api(`/api/threads/${thread.id}/messages/${sent?.userMessage.id}/edit`, {
        method: 'POST',
        token,
        json: { content: '' },
      }),
    );
    await check('delete', '/api/threads/{id}', await app.api(`/api/threads/${thread.id}`, { method: 'DELETE', token }));
    const missingRun = '00000000-0000-4000-8000-000000000000';
    await check('get', '/api/tool-runs/{id}', await app.api(`/api/tool-runs/${missingRun}`, { token }));
    await check(
      'post',
      '/api/tool-runs/{id}/cancel',
      await app.api(`/api/tool-runs/${missingRun}/cancel`, { method: 'POST', token }),
    );
    expect(problems).toEqual([]);
  });

  it('describes the real responses of the memory controls and the export', async () => {
    const problems: string[] = [];
    // Each call names the status it must get, so a documented but unintended status is caught too.
    const check = async (method: string, path: string, response: Response, status: number) => {
      if (response.status !== status)
        problems.push(`${method.toUpperCase()} ${path}: expected ${status}, got ${response.status}`);
      problems.push(...(await responseProblems(document, { method, path }, response)));
    };
    const { token } = await app.guest();
    const thread = (await (await app.api('/api/threads', { method: 'POST', token, json: {} })).json()) as ThreadDto;
    const base = `/api/threads/${thread.id}`;
    const sent: SendMessageResponseDto[] = [];
    for (let turn = 1; turn <= 2; turn += 1) {
      sent.push(
        (await (
          await app.api(`${base}/messages`, { method: 'POST', token, json: { content: `remember CODE-${turn}` } })
        ).json()) as SendMessageResponseDto,
      );
    }
    const [first, second] = sent;
    const missing = '00000000-0000-4000-8000-000000000000';

    await check('get', '/api/threads/{id}/settings', await app.api(`${base}/settings`, { token }), 200);
    await check('get', '/api/threads/{id}/settings', await app.api(`/api/threads/${missing}/settings`, { token }), 404);
    await check(
      'patch',
      '/api/threads/{id}/settings',
      await app.api(`${base}/settings`, { method: 'PATCH', token, json: { trigger: 'messages=8', keep: null } }),
      200,
    );
    await check(
      'patch',
      '/api/threads/{id}/settings',
      await app.api(`${base}/settings`, { method: 'PATCH', token, json: { trigger: 'sometimes' } }),
      400,
    );
    await check(
      'patch',
      '/api/threads/{id}/settings',
      await app.api(`${base}/settings`, { method: 'PATCH', token, json: { summaryPrompt: 'Be brief.' } }),
      403,
    );

    await check(
      'post',
      '/api/threads/{id}/messages/{messageId}/pin',
      await app.api(`${base}/messages/${first?.userMessage.id}/pin`, { method: 'POST', token }),
      200,
    );
    await check(
      'post',
      '/api/threads/{id}/messages/{messageId}/pin',
      await app.api(`${base}/messages/${missing}/pin`, { method: 'POST', token }),
      404,
    );
    await check(
      'delete',
      '/api/threads/{id}/messages/{messageId}/pin',
      await app.api(`${base}/messages/${first?.userMessage.id}/pin`, { method: 'DELETE', token }),
      200,
    );

    const regenerated = await app.api(`${base}/regenerate`, { method: 'POST', token });
    expect(
      ((await regenerated.clone().json()) as RegenerateResponseDto).superseded.map((message) => message.id),
    ).toEqual(second?.messages.map((message) => message.id));
    await check('post', '/api/threads/{id}/regenerate', regenerated, 201);
    // The superseded answer cannot be pinned.
    await check(
      'post',
      '/api/threads/{id}/messages/{messageId}/pin',
      await app.api(`${base}/messages/${second?.messages[0]?.id}/pin`, { method: 'POST', token }),
      409,
    );

    await check(
      'delete',
      '/api/threads/{id}/context-reset',
      await app.api(`${base}/context-reset`, { method: 'DELETE', token }),
      409,
    );
    await check(
      'post',
      '/api/threads/{id}/context-reset',
      await app.api(`${base}/context-reset`, { method: 'POST', token }),
      201,
    );
    await check(
      'delete',
      '/api/threads/{id}/context-reset',
      await app.api(`${base}/context-reset`, { method: 'DELETE', token }),
      200,
    );

    await check(
      'delete',
      '/api/threads/{id}/messages/{messageId}',
      await app.api(`${base}/messages/${first?.userMessage.id}`, { method: 'DELETE', token }),
      200,
    );
    await check(
      'delete',
      '/api/threads/{id}/messages/{messageId}',
      await app.api(`${base}/messages/${first?.userMessage.id}?only=maybe`, { method: 'DELETE', token }),
      400,
    );

    const exported = await app.api(`${base}/export`, { token });
    expect(exported.headers.get('content-disposition')).toBe(`attachment; filename="thread-${thread.id}.json"`);
    await check('get', '/api/threads/{id}/export', exported, 200);
    const markdown = await app.api(`${base}/export?format=markdown`, { token });
    expect(markdown.headers.get('content-type')).toMatch(/^text\/markdown/);
    await check('get', '/api/threads/{id}/export', markdown, 200);
    await check('get', '/api/threads/{id}/export', await app.api(`${base}/export?format=pdf`, { token }), 400);
    expect(problems).toEqual([]);
  });

  it('describes the real responses of the admin API', async () => {
    const problems: string[] = [];
    const check = async (method: string, path: string, response: Response) =>
      problems.push(...(await responseProblems(document, { method, path }, response)));
    const { token } = await app.guest();
    const thread = (await (await app.api('/api/threads', { method: 'POST', token, json: {} })).json()) as ThreadDto;
    for (let turn = 1; turn <= 3; turn += 1)
      await app.api(`/api/threads/${thread.id}/messages`, {
        method: 'POST',
        token,
        json: { content: `turn ${turn} CODE-${turn}` },
      });
    await waitFor(
      async () => {
        const detail = (await (await app.api(`/api/threads/${thread.id}`, { token })).json()) as {
          context: { revision: number; foldPending: boolean };
        };
        return detail.context.revision > 0 && !detail.context.foldPending;
      },
      { timeoutMs: 30_000, what: 'a fold' },
    );
    const admin = { token: ADMIN_TOKEN };

    await check(
      'post',
      '/api/admin/session',
      await app.api('/api/admin/session', { method: 'POST', json: { token: ADMIN_TOKEN } }),
    );
    await check(
      'post',
      '/api/admin/session',
      await app.api('/api/admin/session', { method: 'POST', json: { token: 'wrong' } }),
    );
    await check('delete', '/api/admin/session', await app.api('/api/admin/session', { method: 'DELETE' }));
    await check('get', '/api/admin/threads', await app.api('/api/admin/threads?sort=lag', admin));
    await check('get', '/api/admin/threads', await app.api('/api/admin/threads'));
    await check('get', '/api/admin/threads/{id}', await app.api(`/api/admin/threads/${thread.id}`, admin));
    await check(
      'get',
      '/api/admin/threads/{id}/summaries',
      await app.api(`/api/admin/threads/${thread.id}/summaries`, admin),
    );
    await check(
      'put',
      '/api/admin/threads/{id}/summary',
      await app.api(`/api/admin/threads/${thread.id}/summary`, {
        ...admin,
        method: 'PUT',
        json: { text: 'Corrected: CODE-1.' },
      }),
    );
    await check(
      'put',
      '/api/admin/threads/{id}/summary',
      await app.api(`/api/admin/threads/${thread.id}/summary`, {
        ...admin,
        method: 'PUT',
        json: { text: 'x', expectedRevision: 1 },
      }),
    );
    await check(
      'post',
      '/api/admin/threads/{id}/summarize',
      await app.api(`/api/admin/threads/${thread.id}/summarize`, { ...admin, method: 'POST' }),
    );
    await check(
      'post',
      '/api/admin/threads/{id}/rebuild-summary',
      await app.api(`/api/admin/threads/${thread.id}/rebuild-summary`, { ...admin, method: 'POST' }),
    );
    const calls = await app.api(`/api/admin/threads/${thread.id}/model-calls`, admin);
    expect(((await calls.clone().json()) as ModelCallListDto).calls.length).toBeGreaterThanOrEqual(4);
    await check('get', '/api/admin/threads/{id}/model-calls', calls);
    const userCalls = await app.api(`/api/admin/threads/${thread.id}/model-calls`, { token });
    expect(userCalls.status).toBe(401);
    await check('get', '/api/admin/threads/{id}/model-calls', userCalls);
    await check('get', '/api/admin/queues', await app.api('/api/admin/queues', admin));
    await check('get', '/api/admin/costs', await app.api('/api/admin/costs?by=thread', admin));
    await check('get', '/api/admin/audit', await app.api(`/api/admin/audit?threadId=${thread.id}`, admin));
    await check('get', '/api/admin/audit', await app.api('/api/admin/audit?threadId=nope', admin));
    const metrics = await app.api('/metrics', admin);
    expect(await metrics.clone().text()).toContain('chat_http_responses_total');
    await check('get', '/metrics', metrics);
    const userMetrics = await app.api('/metrics', { token });
    expect(userMetrics.status).toBe(401);
    await check('get', '/metrics', userMetrics);
    expect(problems).toEqual([]);
  });

  it('notices a response that disagrees with the document', async () => {
    const wrongStatus = new Response(JSON.stringify({ threads: [] }), {
      status: 200,
      headers: { 'content-type': 'application/json' },
    });
    expect(await responseProblems(document, { method: 'get', path: '/api/threads' }, wrongStatus)).toEqual([
      expect.stringContaining('nextCursor'),
    ]);
    const undocumentedStatus = new Response(null, { status: 418 });
    expect(await responseProblems(document, { method: 'get', path: '/api/threads' }, undocumentedStatus)).toEqual([
      expect.stringContaining('status not documented'),
    ]);
  });
});
