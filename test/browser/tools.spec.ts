import { expect, test } from '@playwright/test';
import { lastUserText, replyWithText, replyWithToolCalls, type StubRequest } from '../support/openai-stub';
import { summaryResponder } from '../support/summary-stub';
import { startBrowserApp, type BrowserApp } from './support/browser-app';
import { screenshot } from './support/session';
import { SERVER_NOTE_OPEN } from '../../src/core/context';
import { wireContentText } from '../../src/llm/count-chat-tokens';

const FOLLOW_UP = 'The background analysis is done: see the numbers above.';

/** The model: asks for an analysis, acknowledges the handle, then answers the delivered result. */
function chat(request: StubRequest) {
  const last = request.body.messages.at(-1);
  // A follow-up ends with the server's note (user-level text under SERVER_NOTE_OPEN).
  if (last?.role === 'user' && wireContentText(last.content).startsWith(SERVER_NOTE_OPEN))
    return replyWithText(FOLLOW_UP);
  if (last?.role === 'tool') return replyWithText('It is running; I will tell you when it is done.');
  const user = lastUserText(request.body);
  if (user === 'Analyze this thread')
    return replyWithToolCalls([{ name: 'analyze_thread', arguments: { pace_ms: 700 } }]);
  if (user === 'Analyze it very slowly')
    return replyWithToolCalls([{ name: 'analyze_thread', arguments: { pace_ms: 5000 } }]);
  return replyWithText(`Noted: ${user}`);
}

test.describe('tool cards', () => {
  let app: BrowserApp;
  test.beforeAll(async () => {
    app = await startBrowserApp({ responder: summaryResponder({ chat }), env: { TOOL_TIMEOUT_MS: '60000' } });
  });
  test.afterAll(async () => {
    await app?.stop();
  });

  test('an async tool shows its progress in a card, then its result, and the follow-up answer links to the card', async ({
    page,
  }, testInfo) => {
    await page.goto(app.baseUrl);
    const box = page.getByRole('textbox', { name: 'Message' });
    await box.fill('Remember ORD-77 please');
    await box.press('Enter');
    await expect(page.getByText('Noted: Remember ORD-77 please')).toBeVisible();
    await box.fill('Analyze this thread');
    await box.press('Enter');

    const card = page.getByRole('region', { name: /^Tool analyze_thread/ });
    await expect(card).toBeVisible();
    const header = card.getByRole('button', { name: /^analyze_thread/ });
    await expect(header).toHaveAttribute('aria-expanded', 'false');
    await expect(card).toHaveAccessibleName(/running \d+%|queued/);
    await header.click();
    await expect(header).toHaveAttribute('aria-expanded', 'true');
    await expect(card.getByText('"pace_ms": 700')).toBeVisible();
    const progress = card.getByRole('progressbar', { name: 'analyze_thread progress' });
    await expect(progress).toBeVisible();
    await expect.poll(async () => Number(await progress.getAttribute('aria-valuenow'))).toBeGreaterThan(20);
    await expect(card.getByRole('button', { name: 'Cancel analyze_thread' })).toBeVisible();
    await screenshot(page, testInfo, 'tool-running');

    await expect(card).toHaveAccessibleName('Tool analyze_thread, done', { timeout: 30_000 });
    await expect(card.getByText(/Thread analysis \(messages #1 to #\d+\)/)).toBeVisible();
    await expect(card.getByText(/ORD-77/).first()).toBeVisible();
    await expect(card.getByRole('button', { name: /Cancel/ })).toHaveCount(0);

    const followUp = page.getByRole('article', { name: 'Assistant message' }).filter({ hasText: FOLLOW_UP });
    await expect(followUp).toBeVisible();
    const link = followUp.getByRole('link', { name: 'Follow-up to the analyze_thread result' });
    await expect(link).toBeVisible();
    await link.click();
    await expect(header).toBeFocused();
    await screenshot(page, testInfo, 'tool-follow-up');
  });

  test('Cancel stops a running tool', async ({ page }) => {
    await page.goto(app.baseUrl);
    await page.getByRole('button', { name: '+ New chat' }).click();
    await page.getByRole('textbox', { name: 'Message' }).fill('Analyze it very slowly');
    await page.getByRole('textbox', { name: 'Message' }).press('Enter');
    const card = page.getByRole('region', { name: /^Tool analyze_thread/ });
    await card.getByRole('button', { name: /^analyze_thread/ }).click();
    await card.getByRole('button', { name: 'Cancel analyze_thread' }).click();
    await expect(card).toHaveAccessibleName('Tool analyze_thread, cancelled', { timeout: 30_000 });
  });
});
