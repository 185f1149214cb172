import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ThreadDto } from '../../src/shared/api';
import { startOpenAIStub, type OpenAIStub } from '../support/openai-stub';
import { openTab, type Tab } from '../support/socket-client';
import { classifyRequest, summaryResponder } from '../support/summary-stub';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';

const ADMIN_TOKEN = 'test-admin-token-0123456789';

/** The value of one series in Prometheus' text format (0 when absent). */
function seriesValue(text: string, name: string, labels: Record<string, string> = {}): number {
  for (const line of text.split('\n')) {
    if (line.startsWith('#') || !line.startsWith(name)) continue;
    const match = /^([a-z_:]+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const present = Object.fromEntries(
      [...(match[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((pair) => [pair[1], pair[2]]),
    );
    if (Object.entries(labels).every(([key, value]) => present[key] === value)) return Number(match[3]);
  }
  return 0;
}

describe('/metrics', () => {
  let stub: OpenAIStub;
  let app: TestApp;
  let tab: Tab | undefined;

  beforeAll(async () => {
    stub = await startOpenAIStub({ classifyRequest, responder: summaryResponder() });
    app = await startTestApp({
      env: {
        OPENAI_BASE_URL: stub.url,
        SUMMARY_TRIGGER: 'messages=6',
        SUMMARY_KEEP: 'messages=2',
        RATE_LIMIT_PER_MINUTE: '3',
        METRICS_PORT: '0',
      },
    });
  });
  afterAll(async () => {
    tab?.close();
    await app?.stop();
    await stub?.close();
  });

  const scrape = async () => {
    const response = await app.api('/metrics', { token: ADMIN_TOKEN });
    expect(response.status).toBe(200);
    return response.text();
  };

  it('wants the metrics token on the app port', async () => {
    expect((await app.api('/metrics')).status).toBe(401);
    const { token } = await app.guest();
    expect((await app.api('/metrics', { token })).status).toBe(401);
  });

  it('serves the same figures without auth on METRICS_PORT', async () => {
    const port = app.application.metricsPort;
    expect(port).toBeGreaterThan(0);
    const response = await fetch(`http://127.0.0.1:${port}/metrics`);
    expect(response.status).toBe(200);
    expect(await response.text()).toContain('chat_turn_duration_seconds');
  });

  it('moves after turns, a fold, an open socket and rate-limited sends', async () => {
    const before = await scrape();
    expect(seriesValue(before, 'chat_turn_duration_seconds_count', { status: 'complete' })).toBe(0);

    const { token } = await app.guest();
    const thread = (await (await app.api('/api/threads', { method: 'POST', token, json: {} })).json()) as ThreadDto;
    tab = await openTab(app, token);
    for (let turn = 1; turn <= 3; turn += 1) {
      const response = await app.api(`/api/threads/${thread.id}/messages`, {
        method: 'POST',
        token,
        json: { content: `turn ${turn} keeps CODE-${turn}` },
      });
      expect(response.status).toBe(201);
    }
    // The limit is 3 a minute: the fourth send is refused, over HTTP and over the socket.
    expect(
      (
        await app.api(`/api/threads/${thread.id}/messages`, {
          method: 'POST',
          token,
          json: { content: 'one too many' },
        })
      ).status,
    ).toBe(429);
    const refused = await tab.request('message-send', {
      threadId: thread.id,
      content: 'one too many',
      clientMessageId: 'over-limit',
    });
    expect(refused.response).toMatchObject({ ok: false, error: { code: 'RATE_LIMITED' } });

    // Six messages reach the trigger: the in-process worker folds.
    let text = '';
    await waitFor(
      async () => {
        text = await scrape();
        return (
          seriesValue(text, 'chat_folds_total', { author: 'fold' }) >= 1 &&
          seriesValue(text, 'chat_fold_lag_seconds_count') >= 1
        );
      },
      { timeoutMs: 30_000, what: 'a fold in the metrics' },
    );

    expect(seriesValue(text, 'chat_turn_duration_seconds_count', { status: 'complete' })).toBe(3);
    expect(seriesValue(text, 'chat_turn_duration_seconds_sum', { status: 'complete' })).toBeGreaterThan(0);
    expect(seriesValue(text, 'chat_turn_first_token_seconds_count')).toBe(3);
    expect(seriesValue(text, 'chat_model_calls_total', { purpose: 'chat', outcome: 'ok', model: 'gpt-4o-mini' })).toBe(
      3,
    );
    expect(seriesValue(text, 'chat_model_calls_total', { purpose: 'summary', outcome: 'ok' })).toBeGreaterThanOrEqual(
      1,
    );
    expect(seriesValue(text, 'chat_model_tokens_total', { purpose: 'chat', direction: 'in' })).toBeGreaterThan(0);
    expect(seriesValue(text, 'chat_model_tokens_total', { purpose: 'chat', direction: 'out' })).toBeGreaterThan(0);
    // The stub reports usage: estimates and reports are both exported, and their ratio per call.
    const estimated = seriesValue(text, 'chat_model_estimated_prompt_tokens_total', { purpose: 'chat' });
    const reported = seriesValue(text, 'chat_model_reported_prompt_tokens_total', { purpose: 'chat' });
    expect(estimated).toBeGreaterThan(0);
    expect(reported).toBeGreaterThan(0);
    expect(seriesValue(text, 'chat_prompt_token_estimate_ratio_count', { purpose: 'chat' })).toBe(3);
    expect(seriesValue(text, 'chat_fold_duration_seconds_count', { author: 'fold' })).toBe(1);
    expect(seriesValue(text, 'chat_fold_entries_sum')).toBeGreaterThanOrEqual(4);
    expect(seriesValue(text, 'chat_queue_jobs', { queue: 'summary', state: 'completed' })).toBeGreaterThanOrEqual(1);
    expect(text).toMatch(/chat_queue_jobs\{queue="summary",state="waiting"\} 0/);
    expect(seriesValue(text, 'chat_active_sockets')).toBe(1);
    expect(seriesValue(text, 'chat_rate_limited_total', { transport: 'http' })).toBe(1);
    expect(seriesValue(text, 'chat_rate_limited_total', { transport: 'socket' })).toBe(1);
    expect(seriesValue(text, 'chat_http_responses_total', { method: 'POST', status: '201' })).toBeGreaterThanOrEqual(4);

    tab.close();
    await waitFor(async () => seriesValue(await scrape(), 'chat_active_sockets') === 0, {
      timeoutMs: 10_000,
      what: 'the socket to be counted out',
    });
  });
});
