import { expect, test } from '@playwright/test';
import { expectNoAxeViolations } from './support/axe';
import { ADMIN_TOKEN, startBrowserApp, type BrowserApp } from './support/browser-app';
import { screenshot } from './support/session';

test.describe('admin console', () => {
  let app: BrowserApp;
  test.beforeAll(async () => {
    app = await startBrowserApp({
      // A guest default far above anything spent here: the costs per user show it in their "Limit" column.
      env: { SUMMARY_TRIGGER: 'messages=6', SUMMARY_KEEP: 'messages=2', SPEND_LIMIT_GUEST: '100000000tokens/day' },
    });
  });
  test.afterAll(async () => {
    await app?.stop();
  });

  test('signs in, finds a thread, shows its revisions and token chart, and saves an edited summary', async ({
    page,
  }, testInfo) => {
    const guest = await app.guest();
    const thread = await app.createThread(guest.token, 'Quarterly planning');
    await app.createThread(guest.token, 'Unrelated chat');
    for (let turn = 1; turn <= 8; turn += 1) {
      await app.chat(guest.token, thread.id, [
        `Planning note ${turn}: CODE-${200 + turn} ${'and some more words about the plan. '.repeat(turn)}`,
      ]);
    }
    await expect
      .poll(
        async () =>
          (await app.api<{ context: { revision: number } }>(`/api/threads/${thread.id}`, { token: guest.token }))
            .context.revision,
        { timeout: 30_000 },
      )
      .toBeGreaterThanOrEqual(2);

    await page.goto(`${app.baseUrl}/admin`);
    const token = page.getByLabel('Admin token');
    await token.fill('not-the-token-at-all');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect(page.getByRole('alert')).toHaveText('That admin token is not valid.');
    await token.fill(ADMIN_TOKEN);
    await page.getByRole('button', { name: 'Sign in' }).click();

    await expect(page.getByRole('heading', { name: 'Queue health' })).toBeVisible();
    await expect(page.getByRole('link', { name: 'Open the jobs dashboard' })).toHaveAttribute('href', '/admin/jobs');
    const table = page.getByRole('table', { name: 'Threads' });
    await expect(table.getByRole('link', { name: 'Unrelated chat' })).toBeVisible();
    // Our token estimate against the provider's count, and the correction the budget guard applies.
    await expect(page.getByLabel('Estimate correction')).toContainText(/our estimate|estimates are used as they are/);
    // Every tool the model may be offered, with where it comes from.
    const tools = page.getByRole('table', { name: 'Tools' });
    await expect(tools.getByRole('row').filter({ hasText: 'analyze_thread' })).toContainText('built-in');
    await expect(tools.getByRole('row').filter({ hasText: 'analyze_thread' })).toContainText('async');
    await expect(tools.getByRole('row').filter({ hasText: 'search_transcript' })).toContainText('yes');
    // Estimated costs: the provider's cached share per row (this stub reports 0 cached tokens: it has no prompt cache)
    // and a totals row for the whole period.
    const costs = page.getByRole('table', { name: 'Costs' });
    await expect(costs.getByRole('columnheader', { name: 'Cached share' })).toBeVisible();
    const today = costs.getByRole('row', { name: new RegExp(`^${new Date().toISOString().slice(0, 10)}`) });
    await expect(today.getByRole('cell').nth(4)).toHaveText('0.0%');
    const allDays = costs.getByRole('row', { name: /^All days/ });
    await expect(allDays.getByRole('rowheader')).toHaveText('All days');
    await expect(allDays.getByRole('cell').nth(3)).toHaveText('0.0%');
    // Per user, with spend limits enforced: each user's effective limit beside their costs.
    await page.getByLabel('Group costs').selectOption('user');
    await expect(costs.getByRole('columnheader', { name: 'Limit' })).toBeVisible();
    const guestRow = costs.getByRole('row').filter({ hasText: guest.userId });
    await expect(guestRow.getByRole('cell').last()).toHaveText('100000000tokens/day');
    await page.getByLabel('Group costs').selectOption('thread');
    await expect(costs.getByRole('columnheader', { name: 'Limit' })).toHaveCount(0);
    const allThreads = costs.getByRole('row', { name: /^All threads/ });
    await expect(allThreads).toBeVisible();
    // Only one thread has model calls: the total counts exactly its calls.
    const plannedCalls = await costs
      .getByRole('row', { name: /^Quarterly planning/ })
      .getByRole('cell')
      .nth(1)
      .textContent();
    expect(Number(plannedCalls)).toBeGreaterThanOrEqual(8);
    await expect(allThreads.getByRole('cell').nth(0)).toHaveText(plannedCalls ?? '');
    await page.getByRole('searchbox', { name: /Search threads/ }).fill('Quarterly');
    await expect(table.getByRole('link', { name: 'Unrelated chat' })).toHaveCount(0);
    await page.getByLabel('Sort by').selectOption('summary');
    await screenshot(page, testInfo, 'admin-threads');
    await expectNoAxeViolations(page, { what: 'the admin console thread list' });
    await table.getByRole('link', { name: 'Quarterly planning' }).click();

    await expect(page).toHaveURL(new RegExp(`/admin/threads/${thread.id}$`));
    await expect(page.getByRole('heading', { name: 'Quarterly planning' })).toBeVisible();
    const timeline = page.getByRole('list', { name: 'Summary revisions' });
    await expect(timeline.getByRole('listitem')).not.toHaveCount(0);
    await expect(timeline.getByText(/Revision 1 · fold/)).toBeVisible();
    await expect(page.getByRole('img', { name: /Tokens per model call: \d+ calls/ })).toBeVisible();
    await expect(
      page.getByText(
        /chat calls · last call: \d+ context tokens \(reported by the provider\) vs \d+ transcript tokens/,
      ),
    ).toBeVisible();
    await expect(page.getByTestId('cached-share')).toHaveText(
      /^Provider prompt cache: 0% of the prompt tokens of \d+ calls shown$/,
    );
    await screenshot(page, testInfo, 'admin-thread');
    await expectNoAxeViolations(page, { what: 'the admin console thread view' });

    await page.getByRole('button', { name: 'Edit summary' }).click();
    await page
      .getByRole('textbox', { name: 'Summary text' })
      .fill('The user plans the quarter. Key code: CODE-201. Corrected by an admin.');
    await page.getByRole('button', { name: 'Save summary' }).click();
    await expect(page.getByRole('status')).toHaveText('Summary saved.');
    await expect(timeline.getByText(/Revision \d+ · admin/)).toBeVisible();
    await expect(page.getByRole('region', { name: 'Current summary' })).toContainText('Corrected by an admin.');
    await expect(timeline.getByLabel(/Changes in revision \d+: 1 lines added/).first()).toBeVisible();
    await screenshot(page, testInfo, 'admin-edited');
    await expectNoAxeViolations(page, { what: 'the admin console after a summary edit' });
    await page.setViewportSize({ width: 375, height: 800 });
    await screenshot(page, testInfo, 'admin-thread-375');
  });
});
