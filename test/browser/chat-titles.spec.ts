import { expect, test, type Page } from '@playwright/test';
import type { ThreadDto } from '../../src/shared/api';
import { TITLE_SYSTEM_PROMPT } from '../../src/core/titles';
import { wireContentText } from '../../src/llm/count-chat-tokens';
import { echoResponder, replyWithText } from '../support/openai-stub';
import { startBrowserApp, type BrowserApp } from './support/browser-app';
import { screenshot } from './support/session';

/** The guest the page signed in as (its session in localStorage). */
async function guestOf(page: Page): Promise<{ userId: string; token: string }> {
  await expect.poll(() => page.evaluate(() => localStorage.getItem('split-context-chat.session'))).toContain('guest-');
  return JSON.parse((await page.evaluate(() => localStorage.getItem('split-context-chat.session')))!) as {
    userId: string;
    token: string;
  };
}

async function threadsOf(app: BrowserApp, token: string): Promise<ThreadDto[]> {
  return (await app.api<{ threads: ThreadDto[] }>('/api/threads?limit=50', { token })).threads;
}

/** The page at `width`: a load creates no thread, the first message does, and the sidebar shows its title. */
async function firstChat(input: {
  app: BrowserApp;
  page: Page;
  width: number;
  message: string;
  title: string;
  shot: string;
  testInfo: Parameters<Parameters<typeof test>[2]>[1];
}) {
  const { app, page } = input;
  await page.setViewportSize({ width: input.width, height: 800 });
  await page.goto(app.baseUrl);
  await expect(page.getByRole('status', { name: /Connection: Connected/ })).toBeVisible();
  const box = page.getByRole('textbox', { name: 'Message' });
  await expect(box).toBeEnabled();
  const guest = await guestOf(page);
  // Loads and reloads, and "+ New chat", create nothing: the admin list never shows empty chats.
  await page.reload();
  await expect(box).toBeEnabled();
  expect(await threadsOf(app, guest.token)).toEqual([]);
  expect(new URL(page.url()).pathname).toBe('/');

  await box.fill(input.message);
  await box.press('Enter');
  await expect(page).toHaveURL(/\/threads\/[\w-]+$/);
  await expect(page.getByRole('article', { name: 'Assistant message' })).toHaveCount(1);
  await expect(page.getByRole('heading', { level: 1 })).toHaveText(input.title);
  const sidebar = page.getByRole('navigation', { name: 'Threads' });
  if (!(await sidebar.isVisible())) await page.getByRole('button', { name: 'Threads', exact: true }).click();
  await expect(sidebar.locator('.thread-title')).toHaveText([input.title]);
  await expect(sidebar.locator('.thread-title').first()).toBeInViewport();
  expect((await threadsOf(app, guest.token)).map((thread) => thread.title)).toEqual([input.title]);
  await screenshot(page, input.testInfo, input.shot);

  // A new chat is a draft again: nothing is created until its first message.
  await sidebar.getByRole('button', { name: '+ New chat' }).click();
  await expect(page).toHaveURL(`${app.baseUrl}/new`);
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('New chat');
  expect(await threadsOf(app, guest.token)).toHaveLength(1);
}

test.describe('chat titles with the offline model', () => {
  let app: BrowserApp;
  test.beforeAll(async () => {
    app = await startBrowserApp({ offline: true });
  });
  test.afterAll(async () => {
    await app?.stop();
  });

  for (const width of [1280, 390]) {
    test(`at ${width} px: a page load creates no thread; the sidebar shows the first message's words`, async ({
      page,
    }, testInfo) => {
      await firstChat({
        app,
        page,
        width,
        message: 'can you help me plan a team offsite in Lisbon next spring?',
        title: 'Can you help me plan',
        shot: `chat-titles-offline-${width}`,
        testInfo,
      });
    });
  }
});

test.describe('chat titles with a model endpoint', () => {
  let app: BrowserApp;
  test.beforeAll(async () => {
    // The model's titles (the harness defaults to the words), answered by the stub for the title prompt.
    app = await startBrowserApp({
      env: { CHAT_TITLES: 'model' },
      responder: (request) => {
        const system = request.body.messages[0];
        if (system?.role === 'system' && wireContentText(system.content) === TITLE_SYSTEM_PROMPT)
          return replyWithText('Lisbon team offsite', { firstByteDelayMs: 300 });
        return echoResponder(request);
      },
    });
  });
  test.afterAll(async () => {
    await app?.stop();
  });

  for (const width of [1280, 390]) {
    test(`at ${width} px: the sidebar shows the title the summarizer model made in the background`, async ({
      page,
    }, testInfo) => {
      await firstChat({
        app,
        page,
        width,
        message: 'can you help me plan a team offsite in Lisbon next spring?',
        title: 'Lisbon team offsite',
        shot: `chat-titles-model-${width}`,
        testInfo,
      });
    });
  }
});
