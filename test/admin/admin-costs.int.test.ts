// Estimated costs in the admin console: reported usage priced by MODEL_PRICES, per UTC day, user and thread.
import { describe, expect, it } from 'vitest';
import type { AdminThreadDetailDto, CostReportDto } from '../../src/shared/admin-api';
import { useChatServer } from '../support/chat-server';
import { memoryKit } from '../memory/memory-test-kit';

const ADMIN_TOKEN = 'test-admin-token-0123456789';
// Per million tokens: round numbers, so the expected cost is easy to state.
const PRICES = { 'gpt-4o-mini': { input: 2, cachedInput: 1, output: 8 } };

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
    const chatPrompt = server.stub.requests.filter((request) => request.kind === 'chat').reduce((sum, request) => sum + request.promptTokens, 0);

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
    expect(byThread.rows.map((row) => [row.label, row.calls])).toEqual([['first', 2], ['second', 1]]);
    expect(byThread.rows.reduce((sum, row) => sum + (row.cost ?? 0), 0)).toBeCloseTo(today.cost ?? 0, 9);

    const byUser = await costs('by=user');
    expect(byUser.rows).toHaveLength(1);
    const owner = ((await (await server.app.api(`/api/admin/threads/${first.id}`, { token: ADMIN_TOKEN })).json()) as AdminThreadDetailDto).thread.ownerId;
    expect(byUser.rows[0]).toMatchObject({ key: owner, calls: 3 });

    expect((await server.app.api('/api/admin/costs?by=week', { token: ADMIN_TOKEN })).status).toBe(400);
    expect((await server.app.api('/api/admin/costs')).status).toBe(401);
  });
});
