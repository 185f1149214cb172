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

  test('shows the connection state, catches up without duplicates, and sends what was typed offline once', async ({ page, context }, testInfo) => {
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
    await expect(conversation.getByRole('article', { name: 'Your message, not sent yet' })).toContainText('waiting for the connection');
    await screenshot(page, testInfo, 'offline');

    await context.setOffline(false);
    await expect(page.getByRole('status', { name: 'Connection: Connected' })).toBeVisible({ timeout: 30_000 });
    await expect(conversation.getByText('stub reply to: Typed in the tunnel')).toBeVisible();
    await expect(conversation.getByText('stub reply to: Sent from my other tab')).toBeVisible();
    await expect(conversation.getByRole('article', { name: 'Your message, not sent yet' })).toHaveCount(0);

    // Each message once on screen, in the server's order, and the offline one stored once.
    const onScreen = await conversation.getByRole('article').allInnerTexts();
    const stored = (await app.api<MessagePageDto>(`/api/threads/${thread.id}/messages`, { token: guest.token })).messages;
    expect(stored.map((message: MessageDto) => message.content)).toEqual([
      'Before the tunnel', 'stub reply to: Before the tunnel', 'Sent from my other tab', 'stub reply to: Sent from my other tab',
      'Typed in the tunnel', 'stub reply to: Typed in the tunnel',
    ]);
    expect(onScreen).toHaveLength(stored.length);
    stored.forEach((message, index) => expect(onScreen[index]).toContain(message.content));
    await screenshot(page, testInfo, 'caught-up');
  });
});
