import { expect, test } from '@playwright/test';
import type { MessageDto, MessagePageDto } from '../../src/shared/api';
import { startBrowserApp, type BrowserApp } from './support/browser-app';
import { screenshot, useGuest } from './support/session';

test.describe('connection loss', () => {
  let app: BrowserApp;
  test.beforeAll(async () => {
    app = await startBrowserApp();
  });
  test.afterAll(async () => {
    await app?.stop();
  });

  test('shows the connection state, catches up without duplicates, and sends what was typed offline once', async ({
    page,
    context,
  }, testInfo) => {
    const guest = await app.guest();
    const thread = await app.createThread(guest.token, 'Flaky train wifi');
    await app.chat(guest.token, thread.id, ['Before the tunnel']);
    await useGuest(page, guest);
    await page.goto(`${app.baseUrl}/threads/${thread.id}`);
    const conversation = page.getByRole('log', { name: 'Conversation' });
    await expect(page.getByRole('status', { name: 'Connection: Connected' })).toBeVisible();
    await expect(conversation.getByText('stub reply to: Before the tunnel')).toBeVisible();

    await context.setOffline(true);
    await expect(page.getByRole('status', { name: 'Connection: Offline' })).toBeVisible();

    // Meanwhile the conversation goes on in another tab (same user, over REST).
    await app.chat(guest.token, thread.id, ['Sent from my other tab']);
    // And this tab writes while offline.
    await page.getByRole('textbox', { name: 'Message' }).fill('Typed in the tunnel');
    await page.getByRole('textbox', { name: 'Message' }).press('Enter');
    await expect(conversation.getByRole('article', { name: 'Your message, not sent yet' })).toContainText(
      'waiting for the connection',
    );
    await screenshot(page, testInfo, 'offline');

    await context.setOffline(false);
    await expect(page.getByRole('status', { name: 'Connection: Connected' })).toBeVisible({ timeout: 30_000 });
    await expect(conversation.getByText('stub reply to: Typed in the tunnel')).toBeVisible();
    await expect(conversation.getByText('stub reply to: Sent from my other tab')).toBeVisible();
    await expect(conversation.getByRole('article', { name: 'Your message, not sent yet' })).toHaveCount(0);

    // Each message once on screen, in the server's order, and the offline one stored once.
    const onScreen = await conversation.getByRole('article').allInnerTexts();
    const stored = (await app.api<MessagePageDto>(`/api/threads/${thread.id}/messages`, { token: guest.token }))
      .messages;
    expect(stored.map((message: MessageDto) => message.content)).toEqual([
      'Before the tunnel',
      'stub reply to: Before the tunnel',
      'Sent from my other tab',
      'stub reply to: Sent from my other tab',
      'Typed in the tunnel',
      'stub reply to: Typed in the tunnel',
    ]);
    expect(onScreen).toHaveLength(stored.length);
    stored.forEach((message, index) => expect(onScreen[index]).toContain(message.content));
    await screenshot(page, testInfo, 'caught-up');
  });
  test('catches up a long absence in bounded socket acks, asking again after the last seq (never one huge page)', async ({
    page,
    context,
  }) => {
    const guest = await app.guest();
    const thread = await app.createThread(guest.token, 'Long absence');
    await app.chat(guest.token, thread.id, ['Before the flight']);
    const joins: string[] = [];
    const restCatchUps: string[] = [];
    page.on('websocket', (socket) =>
      socket.on('framesent', (frame) => {
        if (typeof frame.payload === 'string' && frame.payload.includes('"thread-join"')) joins.push(frame.payload);
      }),
    );
    page.on('request', (request) => {
      if (/\/messages\?after=/.test(request.url())) restCatchUps.push(request.url());
    });
    await useGuest(page, guest);
    await page.goto(`${app.baseUrl}/threads/${thread.id}`);
    const conversation = page.getByRole('log', { name: 'Conversation' });
    await expect(conversation.getByText('stub reply to: Before the flight')).toBeVisible();

    await context.setOffline(true);
    await expect(page.getByRole('status', { name: 'Connection: Offline' })).toBeVisible();
    // Meanwhile 12 long messages (about 1.2 MB of text) land: more than one catch-up ack may carry.
    await app.application.db.$executeRaw`
      INSERT INTO messages (id, thread_id, seq, role, content, status, tokens, encoding, created_at, updated_at, completed_at)
      SELECT gen_random_uuid(), ${thread.id}::uuid, 2 + g, CASE WHEN g % 2 = 1 THEN 'user' ELSE 'assistant' END,
        'Long message ' || g || ' ' || repeat('lorem ipsum ', 8500), 'complete', 10, 'o200k_base', now(), now(), now()
      FROM generate_series(1, 12) g`;
    await app.application.db.$executeRaw`UPDATE threads SET last_seq = 14 WHERE id = ${thread.id}::uuid`;
    const joinsBefore = joins.length;

    await context.setOffline(false);
    await expect(page.getByRole('status', { name: 'Connection: Connected' })).toBeVisible({ timeout: 30_000 });
    await expect(conversation.getByText(/^Long message 12 /)).toBeVisible({ timeout: 30_000 });
    // Each message once, in order.
    const onScreen = await conversation.getByRole('article').allInnerTexts();
    expect(onScreen).toHaveLength(14);
    for (let index = 1; index <= 12; index += 1) expect(onScreen[index + 1]).toContain(`Long message ${index} `);
    // The catch-up took more than one join (the first ack was cut), each after the last seq received; none over REST.
    const catchUps = joins.slice(joinsBefore).map((payload) => /"afterSeq":(\d+)/.exec(payload)?.[1]);
    expect(catchUps.length).toBeGreaterThanOrEqual(2);
    expect(catchUps[0]).toBe('2');
    expect(Number(catchUps[1])).toBeGreaterThan(2);
    expect(restCatchUps).toEqual([]);
  });
});
