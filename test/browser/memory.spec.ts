import { expect, test } from '@playwright/test';
import { expectNoAxeViolations } from './support/axe';
import { startBrowserApp, type BrowserApp } from './support/browser-app';
import { screenshot } from './support/session';

test.describe('memory panel', () => {
  let app: BrowserApp;
  test.beforeAll(async () => {
    app = await startBrowserApp({
      env: { SUMMARY_TRIGGER: 'messages=6', SUMMARY_KEEP: 'messages=2', SUMMARY_MAX_TOKENS: '200' },
    });
  });
  test.afterAll(async () => {
    await app?.stop();
  });

  test('shows what the model will see, and the summary forming live as the chat grows', async ({ page }, testInfo) => {
    await page.goto(app.baseUrl);
    await expect(page.getByRole('status', { name: /Connection: Connected/ })).toBeVisible();
    await page.getByRole('button', { name: 'Memory' }).click();
    const panel = page.getByRole('complementary', { name: 'Memory' });
    // A new chat is a draft until its first message (no thread yet): nothing to show.
    await expect(panel.getByText('A new chat has no memory yet')).toBeVisible();

    const box = page.getByRole('textbox', { name: 'Message' });
    const answers = page.getByRole('article', { name: 'Assistant message' });
    for (let turn = 1; turn <= 5; turn += 1) {
      await box.fill(`Note ${turn}: remember CODE-${100 + turn} for the project.`);
      await box.press('Enter');
      await expect(answers).toHaveCount(turn);
      await expect(answers.nth(turn - 1)).toContainText(`CODE-${100 + turn}`);
      if (turn === 1) {
        await expect(panel.getByText('No summary yet')).toBeVisible();
        await expect(panel.getByRole('meter', { name: 'Pack tokens against the budget' })).toBeVisible();
        // How "N of M tokens" relates to the window: window − reserve = budget, less the tool definitions.
        await expect(panel.getByTestId('budget-explanation')).toContainText(/reserved for the answer = budget/);
        await expect(panel.getByTestId('budget-explanation')).toContainText(/Tool definitions take [\d,]+, leaving/);
      }
    }

    // The fold ran in the background; the panel updated on summary-updated without a reload.
    await expect(panel.getByText(/Revision [1-9]\d* · covers #1–#\d+/)).toBeVisible({ timeout: 30_000 });
    await expect(panel.locator('.summary-text')).toContainText('Intent: testing long chats');
    await expect(panel.locator('.summary-text')).toContainText('CODE-101');
    await expect(panel.getByRole('list', { name: 'Window entries' }).getByRole('listitem').first()).toContainText(
      'tok',
    );
    await expect(panel.getByText(/Window: \d+ entries/)).toBeVisible();
    // The transcript keeps every message and marks where the model's window starts.
    await expect(page.getByRole('separator', { name: "The model's window starts here" })).toBeVisible();
    await expect(page.getByRole('article', { name: 'You message' })).toHaveCount(5);
    await screenshot(page, testInfo, 'memory-panel-1440');
    await expectNoAxeViolations(page, { what: 'the chat with the memory panel open' });
    await page.setViewportSize({ width: 375, height: 760 });
    await screenshot(page, testInfo, 'memory-panel-375');
    await page.getByRole('button', { name: 'Close memory panel' }).click();
    await expect(panel).toHaveCount(0);
  });
});
