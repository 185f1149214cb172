import { expect, test, type WebSocket } from '@playwright/test';
import type { MessagePageDto } from '../../src/shared/api';
import { startBrowserApp, type BrowserApp } from './support/browser-app';
import { screenshot, useGuest } from './support/session';

/** Short enough for the test to see a token expire, long enough for a page to load under load. */
const TOKEN_TTL_SECONDS = 8;

test.describe('session expiry', () => {
  let app: BrowserApp;
  test.beforeAll(async () => {
    app = await startBrowserApp({ env: { GUEST_TOKEN_TTL: `${TOKEN_TTL_SECONDS}s` } });
  });
  test.afterAll(async () => {
    await app?.stop();
  });

  test('the socket is closed when its token expires; the app refreshes and reconnects keeping its place and unsent text', async ({
    page,
  }, testInfo) => {
    const guest = await app.guest();
    // A token of the same guest session that outlives the setup, for the test's own REST calls.
    const setupToken = await app.application.deps.tokens.sign({ userId: guest.userId, kind: 'guest' }, 3600);
    const thread = await app.createThread(setupToken, 'A long talk');
    await app.chat(
      setupToken,
      thread.id,
      Array.from({ length: 8 }, (_, index) => `Point ${index + 1}:\n${'a line of detail\n'.repeat(4)}`),
    );

    const sockets: WebSocket[] = [];
    let expiredEvents = 0;
    page.on('websocket', (socket) => {
      sockets.push(socket);
      socket.on('framereceived', (frame) => {
        if (String(frame.payload).includes('"session-expired"')) expiredEvents += 1;
      });
    });
    await page.setViewportSize({ width: 1000, height: 600 });
    await useGuest(page, guest);
    await page.goto(`${app.baseUrl}/threads/${thread.id}`);
    const conversation = page.getByRole('log', { name: 'Conversation' });
    await expect(page.getByRole('status', { name: 'Connection: Connected' })).toBeVisible();
    await expect(conversation.getByText('stub reply to: Point 8:')).toBeVisible();
    const messagesBefore = await conversation.getByRole('article').count();

    // A place in the scrollback, a half-written message, and a marker that a reload would wipe.
    await conversation.evaluate((element) => {
      element.scrollTop = Math.floor((element.scrollHeight - element.clientHeight) / 2);
    });
    const scrolledTo = await conversation.evaluate((element) => element.scrollTop);
    expect(scrolledTo).toBeGreaterThan(50);
    const box = page.getByRole('textbox', { name: 'Message' });
    await box.fill('Half-written thought');
    await page.evaluate(() => {
      (window as unknown as { stillThisPage: boolean }).stillThisPage = true;
    });

    // The server closes the socket at the token's expiry, saying so first; the app reconnects on its own.
    await expect.poll(() => expiredEvents, { timeout: (TOKEN_TTL_SECONDS + 20) * 1000 }).toBeGreaterThan(0);
    await expect.poll(() => sockets.length, { timeout: 30_000 }).toBeGreaterThan(1);
    await expect(page.getByRole('status', { name: 'Connection: Connected' })).toBeVisible({ timeout: 30_000 });
    await screenshot(page, testInfo, 'reconnected-after-expiry');

    expect(await page.evaluate(() => (window as unknown as { stillThisPage?: boolean }).stillThisPage)).toBe(true);
    expect(new URL(page.url()).pathname).toBe(`/threads/${thread.id}`);
    await expect(box).toHaveValue('Half-written thought');
    await expect(conversation.getByRole('article')).toHaveCount(messagesBefore);
    expect(Math.abs((await conversation.evaluate((element) => element.scrollTop)) - scrolledTo)).toBeLessThanOrEqual(2);
    const stored = await page.evaluate(
      () =>
        JSON.parse(localStorage.getItem('split-context-chat.session') ?? 'null') as { userId: string; token: string },
    );
    expect(stored.userId).toBe(guest.userId);
    expect(stored.token).not.toBe(guest.token);

    // The same user goes on over the new connection.
    await box.press('Enter');
    await expect(conversation.getByText('stub reply to: Half-written thought')).toBeVisible();
    const page2 = await app.api<MessagePageDto>(`/api/threads/${thread.id}/messages?limit=200`, { token: setupToken });
    expect(page2.messages.at(-2)?.content).toBe('Half-written thought');
  });
});
