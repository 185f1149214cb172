import { expect, test } from '@playwright/test';
import { startBrowserApp, type BrowserApp } from './support/browser-app';
import { screenshot, useGuest } from './support/session';

test.describe('history', () => {
  let app: BrowserApp;
  test.beforeAll(async () => {
    app = await startBrowserApp();
  });
  test.afterAll(async () => {
    await app?.stop();
  });

  test('older messages load page by page on scroll up, without moving what is on screen', async ({
    page,
  }, testInfo) => {
    const guest = await app.guest();
    const thread = await app.createThread(guest.token, 'A long history');
    // 45 turns = 90 messages: the join shows the newest 50, scrolling up pages in the rest.
    await app.chat(
      guest.token,
      thread.id,
      Array.from({ length: 45 }, (_, index) => `History line ${index + 1}`),
    );
    await useGuest(page, guest);
    await page.goto(`${app.baseUrl}/threads/${thread.id}`);

    const conversation = page.getByRole('log', { name: 'Conversation' });
    await expect(conversation.getByText('stub reply to: History line 45')).toBeVisible();
    await expect(conversation.getByText('History line 1', { exact: true })).toHaveCount(0);
    const bubbles = conversation.getByRole('article');
    await expect(bubbles).toHaveCount(50);

    // Scroll to the top: the oldest loaded message stays exactly where it is while older ones arrive above it.
    // Pinned to its seq: `bubbles.first()` is re-evaluated on each use and would name the older page's first
    // bubble if that page landed before the measurement.
    const anchorSeq = await bubbles.first().getAttribute('data-seq');
    const anchor = conversation.locator(`[data-seq="${anchorSeq}"]`);
    await conversation.evaluate((element) => {
      element.scrollTop = 0;
    });
    const before = (await anchor.boundingBox())!.y;
    // One page (30 messages) at a time: the position is kept, so nothing else loads until the reader scrolls again.
    await expect(bubbles).toHaveCount(80);
    expect(Math.abs((await anchor.boundingBox())!.y - before)).toBeLessThan(60);
    await expect(conversation.getByText('History line 1', { exact: true })).toHaveCount(0);

    // Further up: the last page and the start of the conversation.
    await conversation.evaluate((element) => {
      element.scrollTop = 0;
    });
    await expect(bubbles).toHaveCount(90);
    await conversation.evaluate((element) => {
      element.scrollTop = 0;
    });
    await expect(conversation.getByText('Beginning of the conversation')).toBeVisible();
    await expect(conversation.getByText('History line 1', { exact: true })).toBeVisible();
    await screenshot(page, testInfo, 'history-top');
  });
});
