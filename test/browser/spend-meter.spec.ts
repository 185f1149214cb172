import { expect, test } from '@playwright/test';
import { echoResponder } from '../support/openai-stub';
import { startBrowserApp, type BrowserApp } from './support/browser-app';
import { screenshot } from './support/session';

// Issue 35: once a spend limit applies, the header shows a quiet meter of what is used this period, and a send the limit
// refuses says so, naming the limit and its reset.
test.describe('the spend meter', () => {
  let app: BrowserApp;
  test.beforeAll(async () => {
    app = await startBrowserApp({
      responder: echoResponder,
      // A send holds about 3,000 tokens (a 2,700-token prompt and a 300-token answer): one fits, not a second after it.
      env: { CONTEXT_MAX_INPUT_TOKENS: '3000', RESERVED_OUTPUT_TOKENS: '300', SPEND_LIMIT_GUEST: '3200tokens/day' },
    });
  });
  test.afterAll(async () => {
    await app?.stop();
  });

  test('shows what is used, grows after an answer, and a refused send names the limit and the reset', async ({
    page,
  }, testInfo) => {
    await page.goto(app.baseUrl);
    await expect(page.getByRole('status', { name: /Connection: Connected/ })).toBeVisible();
    const meter = page.getByRole('meter', { name: 'Spend limit used' });
    await expect(meter).toHaveAttribute('aria-valuenow', '0');
    await expect(meter).toHaveAttribute('aria-valuetext', /^3,200 tokens left of 3,200 tokens this day; resets /);

    const box = page.getByRole('textbox', { name: 'Message' });
    await box.fill('Hello there');
    await box.press('Enter');
    const conversation = page.getByRole('log', { name: 'Conversation' });
    await expect(conversation.getByRole('article', { name: 'Assistant message' }).last()).toContainText(
      'stub reply to: Hello there',
    );
    await expect.poll(async () => Number(await meter.getAttribute('aria-valuenow'))).toBeGreaterThan(0);
    const used = Number(await meter.getAttribute('aria-valuenow'));
    expect(used).toBeLessThan(100);

    await box.fill('One more');
    await box.press('Enter');
    const refused = conversation.getByRole('alert');
    await expect(refused).toContainText('Your spend limit of 3,200 tokens per day is reached; it resets at');
    // Retrying cannot help before the reset: only Discard is offered.
    await expect(refused.getByRole('button', { name: 'Retry' })).toHaveCount(0);
    await expect(refused.getByRole('button', { name: 'Discard' })).toBeVisible();
    await screenshot(page, testInfo, 'spend-limit-refused');
    // Nothing was spent on it.
    await expect(meter).toHaveAttribute('aria-valuenow', String(used));
  });
});
