// Estimated costs in the admin console: reported usage priced by MODEL_PRICES, per UTC day, user and thread.
import { describe, expect, it } from 'vitest';
import type { AdminThreadDetailDto, CostReportDto } from '../../src/shared/admin-api';
import { useChatServer } from '../support/chat-server';
import { lastUserText, replyWithText } from '../support/openai-stub';
import { memoryKit } from '../memory/memory-test-kit';

const ADMIN_TOKEN = 'test-admin-token-0123456789';
// Per million tokens: round numbers, so the expected cost is easy to state.
const PRICES = { 'gpt-4o-mini': { input: 2, cachedInput: 1, output: 8 } };
// A system prompt above OpenAI's 1,024-token minimum, so the stub's prompt cache serves a thread's later calls.
const SYSTEM_PROMPT = `You are the assistant of the cost suite. ${Array.from({ length: 700 }, (_, index) => `rule${index}`).join(' ')}`;

describe('estimated costs (GET /api/admin/costs)', () => {
  const server = useChatServer({ env: { CHAT_MODEL: 'gpt-4o-mini', MODEL_PRICES: JSON.stringify(PRICES) } });
  const kit = memoryKit(server);

  async function costs(query: string): Promise<CostReportDto> {
    const response = await server.app.api(`/api/admin/costs?${query}`, { token: ADMIN_TOKEN });
    expect(response.status).toBe(200);
    return (await response.json()) as CostReportDto;
  }

  it('prices the reported usage per day, per user and per thread', async () => {
    const first = await kit.createThread('first');
    const second = await kit.createThread('second');
    await kit.send(first.id, 'What is the capital of France?');
    await kit.send(first.id, 'And of Portugal?');
    await kit.send(second.id, 'Hello there.');
    const chatPrompt = server.stub.requests
      .filter((request) => request.kind === 'chat')
      .reduce((sum, request) => sum + request.promptTokens, 0);

    const byDay = await costs('by=day');
    expect(byDay.pricedModels).toEqual(['gpt-4o-mini']);
    expect(byDay.rows).toHaveLength(1);
    const today = byDay.rows[0]!;
    expect(today.key).toBe(new Date().toISOString().slice(0, 10));
    // Every call was reported by the stub: nothing is our estimate.
    expect(today).toMatchObject({ calls: 3, promptTokens: chatPrompt, estimatedCalls: 0, unpricedModels: [] });
    expect(today.completionTokens).toBeGreaterThan(0);
    const uncached = today.promptTokens - today.cachedTokens;
    expect(today.cost).toBeCloseTo((uncached * 2 + today.cachedTokens * 1 + today.completionTokens * 8) / 1_000_000, 9);

    const byThread = await costs('by=thread');
    expect(byThread.rows.map((row) => [row.label, row.calls])).toEqual([
      ['first', 2],
      ['second', 1],
    ]);
    expect(byThread.rows.reduce((sum, row) => sum + (row.cost ?? 0), 0)).toBeCloseTo(today.cost ?? 0, 9);

    const byUser = await costs('by=user');
    expect(byUser.rows).toHaveLength(1);
    const owner = (
      (await (
        await server.app.api(`/api/admin/threads/${first.id}`, { token: ADMIN_TOKEN })
      ).json()) as AdminThreadDetailDto
    ).thread.ownerId;
    expect(byUser.rows[0]).toMatchObject({ key: owner, calls: 3 });

    expect((await server.app.api('/api/admin/costs?by=week', { token: ADMIN_TOKEN })).status).toBe(400);
    expect((await server.app.api('/api/admin/costs')).status).toBe(401);
  });
});

describe('the cached share in the estimated costs (GET /api/admin/costs)', () => {
  // The stub reports cached tokens as OpenAI's prompt cache would, and no usage at all for a message marked "Unreported".
  const server = useChatServer({
    stub: {
      promptCache: true,
      responder: (request) =>
        replyWithText('noted', lastUserText(request.body).startsWith('Unreported') ? { omitUsage: true } : {}),
    },
    env: {
      CHAT_MODEL: 'gpt-4o-mini',
      MODEL_PRICES: JSON.stringify(PRICES),
      SYSTEM_PROMPT,
      RECALL_TOKENS: '0',
      SUMMARY_TRIGGER: 'messages=50',
    },
  });
  const kit = memoryKit(server);

  async function costs(query: string): Promise<CostReportDto> {
    const response = await server.app.api(`/api/admin/costs?${query}`, { token: ADMIN_TOKEN });
    expect(response.status).toBe(200);
    return (await response.json()) as CostReportDto;
  }

  it('gives each row and the whole period the share of reported prompt tokens served from the cache, undiluted by calls without a report', async () => {
    const cachedThread = await kit.createThread('cached');
    await kit.send(cachedThread.id, 'First message.');
    await kit.send(cachedThread.id, 'Second message.');
    await kit.send(cachedThread.id, 'Third message.');
    const unreportedThread = await kit.createThread('unreported');
    await kit.send(unreportedThread.id, 'Unreported question.');
    const chats = server.stub.requests.filter((request) => request.kind === 'chat');
    expect(chats).toHaveLength(4);
    const reported = chats.slice(0, 3);
    const reportedPrompt = reported.reduce((sum, request) => sum + request.promptTokens, 0);
    const reportedCached = reported.reduce((sum, request) => sum + (request.cachedTokens ?? 0), 0);
    // The second and third prompts repeat the first one's long prefix: most of their tokens were cached.
    expect(reportedCached).toBeGreaterThan(2 * 1024);
    const share = reportedCached / reportedPrompt;

    const byThread = await costs('by=thread');
    const cached = byThread.rows.find((row) => row.key === cachedThread.id);
    const unreported = byThread.rows.find((row) => row.key === unreportedThread.id);
    expect(cached).toMatchObject({
      calls: 3,
      promptTokens: reportedPrompt,
      cachedTokens: reportedCached,
      estimatedCalls: 0,
    });
    expect(cached?.cachedShare).toBeCloseTo(share, 9);
    // A call without a usage report: its prompt tokens are our estimate, and it has no cached share at all.
    expect(unreported).toMatchObject({ calls: 1, cachedTokens: 0, estimatedCalls: 1, cachedShare: null });
    expect(unreported?.promptTokens).toBeGreaterThan(1024);

    // The whole period: every call counted, the estimated one's tokens in the prompt tokens but not in the share.
    const total = byThread.total;
    expect(total).toMatchObject({
      calls: 4,
      promptTokens: reportedPrompt + unreported!.promptTokens,
      cachedTokens: reportedCached,
      estimatedCalls: 1,
      unpricedModels: [],
    });
    expect(total.cachedShare).toBeCloseTo(share, 9);
    expect(total.cachedShare!).toBeGreaterThan(total.cachedTokens / total.promptTokens);
    expect(total.completionTokens).toBe(byThread.rows.reduce((sum, row) => sum + row.completionTokens, 0));
    expect(total.cost).toBeCloseTo((cached?.cost ?? 0) + (unreported?.cost ?? 0), 9);

    // The one day row agrees with the total; the total covers the groups the limit leaves out of the rows too.
    const byDay = await costs('by=day');
    expect(byDay.rows).toHaveLength(1);
    expect(byDay.rows[0]).toMatchObject({ calls: 4, cachedTokens: reportedCached, estimatedCalls: 1 });
    expect(byDay.rows[0]?.cachedShare).toBeCloseTo(share, 9);
    expect(byDay.total).toEqual(total);
    const limited = await costs('by=thread&limit=1');
    expect(limited.rows).toHaveLength(1);
    expect(limited.total).toEqual(total);
  });
});
