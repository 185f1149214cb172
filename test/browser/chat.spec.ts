import { expect, test } from '@playwright/test';
import { echoResponder, replyWithError, replyWithText } from '../support/openai-stub';
import { expectNoAxeViolations } from './support/axe';
import { startBrowserApp, type BrowserApp } from './support/browser-app';
import { screenshot } from './support/session';

const MARKDOWN_ANSWER = [
  'Here is **the plan**:',
  '',
  '- first step',
  '- second step',
  '',
  '```js',
  'const answer = 42;',
  '```',
  '',
  'Raw HTML stays text: <img src="x" onerror="window.__pwned = 1"> and <script>window.__pwned = 2</script>',
  '',
  'See [the docs](https://example.com/docs) — done.',
].join('\n');

test.describe('chat', () => {
  let app: BrowserApp;
  test.beforeAll(async () => {
    app = await startBrowserApp({ env: { MODEL_MAX_RETRIES: '0' } });
  });
  test.afterAll(async () => {
    await app?.stop();
  });
  test.beforeEach(() => {
    app.stub!.setResponder(echoResponder);
  });

  test('streams an answer token by token and renders it as safe Markdown', async ({ page }, testInfo) => {
    app.stub!.setResponder(() => replyWithText(MARKDOWN_ANSWER, { chunkDelayMs: 60 }));
    await page.goto(app.baseUrl);
    await expect(page.getByRole('status', { name: /Connection: Connected/ })).toBeVisible();
    await expect(page.getByText('gpt-4o-mini')).toBeVisible();

    const box = page.getByRole('textbox', { name: 'Message' });
    await box.fill('Plan my week');
    await box.press('Shift+Enter');
    await box.pressSequentially('in two lines');
    await expect(box).toHaveValue('Plan my week\nin two lines');
    await box.press('Enter');
    await expect(box).toHaveValue('');

    const conversation = page.getByRole('log', { name: 'Conversation' });
    const question = conversation.getByRole('article', { name: 'You message' });
    await expect(question).toContainText('Plan my week');
    expect(await question.locator('p').innerText()).toBe('Plan my week\nin two lines');

    // Streaming is visible: a partial answer on screen before the end arrives.
    const answer = conversation.getByRole('article', { name: 'Assistant message' }).last();
    await expect(answer).toContainText('Here is');
    await expect(answer).not.toContainText('done.');
    await expect(answer).toHaveAttribute('aria-busy', 'true');
    await screenshot(page, testInfo, 'chat-streaming');
    await expect(answer).toContainText('done.');
    await expect(answer).toHaveAttribute('aria-busy', 'false');

    await expect(answer.locator('strong')).toHaveText('the plan');
    await expect(answer.getByRole('listitem')).toHaveText(['first step', 'second step']);
    await expect(answer.locator('pre code')).toHaveText('const answer = 42;');
    await expect(answer.getByRole('link', { name: 'the docs' })).toHaveAttribute('href', 'https://example.com/docs');
    // The model's raw HTML never became DOM.
    await expect(answer.locator('img, script')).toHaveCount(0);
    expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
    await screenshot(page, testInfo, 'chat-answered');
    await expectNoAxeViolations(page, { what: 'the chat with an answer' });
  });

  test('message actions: a quiet icon row that shows on hover and keyboard focus, with tooltips, always shown on touch screens', async ({
    page,
    browser,
  }, testInfo) => {
    await page.goto(app.baseUrl);
    await page.getByRole('button', { name: '+ New chat' }).click();
    const box = page.getByRole('textbox', { name: 'Message' });
    await box.fill('Quiet actions please');
    await box.press('Enter');
    const conversation = page.getByRole('log', { name: 'Conversation' });
    const answer = conversation.getByRole('article', { name: 'Assistant message' }).last();
    await expect(answer).toContainText('stub reply to: Quiet actions please');
    const actions = answer.getByRole('group', { name: /^Actions on answer #\d+$/ });
    // The last answer's: What the model saw, Pin, Regenerate, Branch from here, Delete.
    await expect(actions.getByRole('button')).toHaveCount(5);
    const opacity = (locator: typeof actions) => locator.evaluate((element) => getComputedStyle(element).opacity);
    const tooltip = (locator: typeof actions) =>
      locator.evaluate((element) => {
        const after = getComputedStyle(element, '::after');
        return { text: after.content, opacity: after.opacity };
      });

    // At rest: present (and in the tab order) but not shown.
    await page.mouse.move(0, 0);
    await expect.poll(() => opacity(actions)).toBe('0');
    // Hover shows the row; hovering a button shows its tooltip, the start of its accessible name.
    await answer.hover();
    await expect.poll(() => opacity(actions)).toBe('1');
    const branch = actions.getByRole('button', { name: /^Branch from here at #\d+$/ });
    await branch.hover();
    await expect.poll(() => tooltip(branch)).toEqual({ text: '"Branch from here"', opacity: '1' });
    await screenshot(page, testInfo, 'message-actions-hover');

    // The keyboard: Shift+Tab back from the composer reaches the last answer's actions, and they show.
    await page.mouse.move(0, 0);
    await box.focus();
    const deleteAnswer = actions.getByRole('button', { name: /^Delete answer #\d+$/ });
    for (
      let step = 0;
      step < 6 && !(await deleteAnswer.evaluate((element) => element === document.activeElement));
      step += 1
    )
      await page.keyboard.press('Shift+Tab');
    await expect(deleteAnswer).toBeFocused();
    await expect.poll(() => opacity(actions)).toBe('1');
    await expect.poll(() => tooltip(deleteAnswer)).toEqual({ text: '"Delete"', opacity: '1' });
    await page.keyboard.press('Shift+Tab');
    await expect(actions.getByRole('button', { name: /^Branch from here at #\d+$/ })).toBeFocused();
    await page.keyboard.press('Shift+Tab');
    await expect(actions.getByRole('button', { name: /^Regenerate answer #\d+$/ })).toBeFocused();
    await page.keyboard.press('Shift+Tab');
    await expect(actions.getByRole('button', { name: /^Pin answer #\d+$/ })).toBeFocused();
    await page.keyboard.press('Shift+Tab');
    await expect(actions.getByRole('button', { name: /^What the model saw for answer #\d+$/ })).toBeFocused();
    // Enter opens what it names; the delete choice stays on screen while it is open, Cancel closes it.
    for (let step = 0; step < 4; step += 1) await page.keyboard.press('Tab');
    await expect(deleteAnswer).toBeFocused();
    await page.keyboard.press('Enter');
    const choice = answer.getByRole('group', { name: 'Delete this message?' });
    await expect(choice.getByRole('button', { name: 'Delete this answer' })).toBeFocused();
    await page.mouse.move(0, 0);
    await expect.poll(() => opacity(actions)).toBe('1');
    await screenshot(page, testInfo, 'message-actions-delete-choice');
    await choice.getByRole('button', { name: 'Cancel' }).press('Enter');
    await expect(choice).toHaveCount(0);
    await expectNoAxeViolations(page, { what: 'the chat with its message actions' });

    // A touch screen has no hover: the actions are always shown there.
    const touch = await browser.newContext({ hasTouch: true, isMobile: true, viewport: { width: 390, height: 800 } });
    try {
      const phone = await touch.newPage();
      await phone.addInitScript(
        (session) => localStorage.setItem('split-context-chat.session', session),
        await page.evaluate(() => localStorage.getItem('split-context-chat.session') ?? ''),
      );
      await phone.goto(page.url());
      expect(await phone.evaluate(() => matchMedia('(hover: none)').matches)).toBe(true);
      const phoneActions = phone
        .getByRole('log', { name: 'Conversation' })
        .getByRole('group', { name: /^Actions on answer #\d+$/ })
        .last();
      await expect(phoneActions).toBeVisible();
      await expect.poll(() => opacity(phoneActions)).toBe('1');
      await screenshot(phone, testInfo, 'message-actions-touch');
    } finally {
      await touch.close();
    }
  });

  test('a first visit signs in one guest, whose socket joins the thread it created (a production build)', async ({
    page,
    request,
  }) => {
    const guestSignIns: string[] = [];
    page.on('request', (sent) => {
      if (sent.method() === 'POST' && new URL(sent.url()).pathname === '/api/auth/guest') guestSignIns.push(sent.url());
    });
    await page.goto(app.baseUrl);
    await page.getByRole('textbox', { name: 'Message' }).fill('Hello there');
    await page.getByRole('textbox', { name: 'Message' }).press('Enter');
    // The answer arrives over the socket, so it joined the new thread as the guest that created it.
    await expect(page.getByRole('article', { name: 'Assistant message' }).last()).toContainText('Hello there');
    await expect(page.getByText('No such thread.')).toHaveCount(0);
    expect(guestSignIns).toHaveLength(1);
    // The bundle served is React's production build: a development one (vite under NODE_ENV=development) runs
    // every mount effect twice under StrictMode, which signed in two guests on a first visit.
    const scripts = await page.evaluate(() =>
      [...document.querySelectorAll('script[src]')].map((script) => (script as HTMLScriptElement).src),
    );
    expect(scripts.length).toBeGreaterThan(0);
    for (const src of scripts)
      expect(
        (await (await request.get(src)).text()).includes('not wrapped in act('),
        `${src} is a development build`,
      ).toBe(false);
  });

  test('Stop cancels a running answer and keeps the partial text', async ({ page }) => {
    const words = Array.from({ length: 80 }, (_, index) => `word${index}`).join(' ');
    app.stub!.setResponder(() => replyWithText(words, { chunkDelayMs: 150 }));
    await page.goto(app.baseUrl);
    await page.getByRole('textbox', { name: 'Message' }).fill('Tell me a long story');
    await page.getByRole('button', { name: 'Send' }).click();
    const answer = page.getByRole('article', { name: 'Assistant message' }).last();
    await expect(answer).toContainText('word3');
    await page.getByRole('button', { name: 'Stop' }).click();
    await expect(answer).toContainText('stopped');
    await expect(answer).not.toContainText('word79');
    await expect(page.getByRole('button', { name: 'Stop' })).toHaveCount(0);
  });

  test('a failed answer shows its error next to it, and Retry answers again', async ({ page }, testInfo) => {
    app.stub!.setResponder(() => replyWithError(500));
    await page.goto(app.baseUrl);
    await page.getByRole('button', { name: '+ New chat' }).click();
    await page.getByRole('textbox', { name: 'Message' }).fill('Are you there?');
    await page.getByRole('textbox', { name: 'Message' }).press('Enter');
    const failed = page.getByRole('article', { name: 'Assistant message' }).last();
    await expect(failed.getByRole('alert')).toBeVisible();
    await screenshot(page, testInfo, 'chat-error');
    await expectNoAxeViolations(page, { what: 'the chat with a failed answer' });

    app.stub!.setResponder(echoResponder);
    await failed.getByRole('button', { name: 'Retry' }).click();
    await expect(
      page.getByRole('article', { name: 'Assistant message' }).filter({ hasText: 'stub reply to: Are you there?' }),
    ).toBeVisible();
  });
});
