import { expect, test } from '@playwright/test';
import { startBrowserApp, type BrowserApp } from './support/browser-app';
import { screenshot } from './support/session';

test.describe('first visit with the offline model', () => {
  let app: BrowserApp;
  test.beforeAll(async () => {
    app = await startBrowserApp({ offline: true });
  });
  test.afterAll(async () => {
    await app?.stop();
  });

  test('creates a guest session that survives a reload, labels the offline model, and manages threads', async ({
    page,
  }, testInfo) => {
    await page.goto(app.baseUrl);
    await expect(page.getByText('Offline model (demo replies)')).toBeVisible();
    const threads = page.getByRole('navigation', { name: 'Threads' });
    // A first visit is a new chat, not yet a thread: the first message creates it, titled from its words.
    await expect(page.getByRole('heading', { level: 1 })).toHaveText('New chat');
    await expect(threads.locator('.thread-title')).toHaveCount(0);
    const box = page.getByRole('textbox', { name: 'Message' });
    await box.fill('Plan a family holiday in Crete this summer');
    await box.press('Enter');
    await expect(page).toHaveURL(/\/threads\/[\w-]+$/);
    await expect(threads.getByRole('button', { name: /^Plan a family holiday in Crete/ })).toBeVisible();
    const firstUrl = page.url();
    const session = await page.evaluate(() => localStorage.getItem('split-context-chat.session'));
    expect(session).toContain('guest-');

    // Rename in place.
    await threads
      .getByRole('button', { name: /^Rename / })
      .first()
      .click();
    await threads.getByRole('textbox', { name: 'Thread title' }).fill('Holiday plans');
    await threads.getByRole('textbox', { name: 'Thread title' }).press('Enter');
    await expect(threads.getByRole('button', { name: /^Holiday plans/ })).toBeVisible();
    await expect(page.getByRole('heading', { level: 1 })).toHaveText('Holiday plans');

    // A second chat starts as a draft and goes on top once its first message is sent; the reload keeps the same
    // guest and both threads.
    await threads.getByRole('button', { name: '+ New chat' }).click();
    await expect(page).toHaveURL(`${app.baseUrl}/new`);
    await expect(threads.locator('.thread-title')).toHaveCount(1);
    await box.fill('What should I pack?');
    await box.press('Enter');
    await expect(page).not.toHaveURL(firstUrl);
    await expect(threads.getByRole('button', { name: /^What should I pack/ })).toBeVisible();
    await page.reload();
    await expect(threads.getByRole('button', { name: /^Holiday plans/ })).toBeVisible();
    expect(
      await page.evaluate(() => JSON.parse(localStorage.getItem('split-context-chat.session') ?? '{}').userId),
    ).toBe(JSON.parse(session!).userId);
    const titles = await threads.locator('.thread-title').allTextContents();
    expect(titles).toEqual(['What should I pack', 'Holiday plans']);
    await screenshot(page, testInfo, 'first-visit-1440');
    await page.setViewportSize({ width: 375, height: 760 });
    await screenshot(page, testInfo, 'first-visit-375');
  });
});
