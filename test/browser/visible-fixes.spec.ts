import { expect, test, type Page } from '@playwright/test';
import type { ThreadDetailDto, ThreadDto } from '../../src/shared/api';
import { ADMIN_TOKEN, startBrowserApp, type BrowserApp } from './support/browser-app';
import { screenshot, useGuest } from './support/session';

/** A link too long for any line: it must wrap, never push the dialog sideways. */
const LONG_LINK = `https://example.com/${'averyveryverylongpathsegment'.repeat(12)}`;

const TURNS = [
  'We plan an offsite for 40 people in March; the budget is 20,000 euros.',
  `The venue shortlist is at ${LONG_LINK} and we should compare the lakeside hotel with the old mill before Friday.`,
  'The caterer should be Green Fork, they do vegetarian food well.',
  'Please keep the venue shortlist in mind when we pick dates later.',
  'We also need a projector and a quiet room for the planning workshop.',
  'Remind me to book the train tickets once the dates are fixed.',
];

const WIDTHS = [
  { name: 'desktop', width: 1280, height: 800 },
  { name: 'phone', width: 390, height: 844 },
] as const;

async function scrollsSideways(page: Page, selector: string): Promise<boolean> {
  return page.locator(selector).evaluate((element) => element.scrollWidth > element.clientWidth + 1);
}

/** Item 6 of issue 36: the small things a newcomer sees in the first minutes, at desktop and phone widths. */
test.describe('the visible fixes of the first minutes', () => {
  let app: BrowserApp;
  let guest: { userId: string; token: string };
  let thread: ThreadDto;

  test.beforeAll(async () => {
    app = await startBrowserApp({
      offline: true,
      env: { SUMMARY_TRIGGER: 'messages=8', SUMMARY_KEEP: 'messages=4' },
    });
    guest = await app.guest();
    thread = await app.createThread(guest.token, 'Offsite planning for the whole team in March');
    await app.chat(guest.token, thread.id, TURNS);
    // Folded once, the fold finished: the summary the panel and the dialog both name.
    await expect
      .poll(async () => {
        const detail = await app.api<ThreadDetailDto>(`/api/threads/${thread.id}`, { token: guest.token });
        return detail.context.revision >= 1 && !detail.context.foldPending;
      })
      .toBe(true);
    await app.chat(guest.token, thread.id, [`Which venue did we shortlist? The list is also at ${LONG_LINK}`]);
  });
  test.afterAll(async () => {
    await app?.stop();
  });

  test('the favicon is served, linked from the page and /favicon.ico never 404s', async ({ page }) => {
    const ico = await fetch(`${app.baseUrl}/favicon.ico`);
    expect(ico.status).toBe(200);
    expect(ico.headers.get('content-type')).toContain('image/svg+xml');
    await useGuest(page, guest);
    await page.goto(`${app.baseUrl}/threads/${thread.id}`);
    const href = await page.locator('link[rel="icon"]').getAttribute('href');
    expect((await fetch(new URL(href!, app.baseUrl))).status).toBe(200);
  });

  for (const size of WIDTHS) {
    test(`at ${size.width} px: the header keeps the title and the model badge, the dialog wraps, the panel and dialog agree`, async ({
      page,
    }, testInfo) => {
      await page.setViewportSize({ width: size.width, height: size.height });
      await useGuest(page, guest);
      await page.goto(`${app.baseUrl}/threads/${thread.id}`);
      await expect(page.getByRole('status', { name: /Connection: Connected/ })).toBeVisible();

      // The header: the chat's title readable (not squeezed to a sliver), the model badge shown.
      const title = page.getByRole('heading', { level: 1 });
      await expect(title).toBeVisible();
      expect((await title.boundingBox())!.width).toBeGreaterThan(size.width * 0.4);
      await expect(page.locator('.model-label')).toBeVisible();
      await expect(page.locator('.model-label')).toContainText('Offline model');
      expect(await scrollsSideways(page, '.app-header')).toBe(false);
      await screenshot(page, testInfo, `header-${size.name}`);

      // "Saved memories" shows when it is the open view.
      const saved = page.getByRole('button', { name: 'Saved memories' });
      const before = await saved.evaluate((element) => getComputedStyle(element).backgroundColor);
      await saved.click();
      await expect(saved).toHaveAttribute('aria-pressed', 'true');
      expect(await saved.evaluate((element) => getComputedStyle(element).backgroundColor)).not.toBe(before);
      await screenshot(page, testInfo, `saved-memories-pressed-${size.name}`);
      await saved.click();
      await expect(saved).toHaveAttribute('aria-pressed', 'false');

      // The memory panel names the summary's range; its window is listed in transcript order.
      await page.getByRole('button', { name: 'Memory', exact: true }).click();
      const panelRange = page.locator('.memory-panel').getByText(/^Revision \d+ · covers #\d+–#\d+/);
      await expect(panelRange).toBeVisible();
      const [, revision, range] = /^Revision (\d+) · covers (#\d+–#\d+)/.exec((await panelRange.textContent())!)!;
      const windowSeqs = (
        await page.getByRole('list', { name: 'Window entries' }).locator('.seq').allTextContents()
      ).map((text) => Number(text.slice(1)));
      expect(windowSeqs.length).toBeGreaterThan(1);
      expect(windowSeqs).toEqual([...windowSeqs].sort((left, right) => left - right));
      await screenshot(page, testInfo, `memory-panel-${size.name}`);
      await page.getByRole('button', { name: 'Close memory panel' }).click();

      // What the model saw for the last answer: the same revision, the same range; long lines wrap inside.
      const last = page.getByRole('button', { name: /What the model saw for answer #\d+/ }).last();
      await last.click();
      const dialog = page.getByRole('dialog', { name: /What the model saw/ });
      await expect(dialog).toBeVisible();
      await expect(dialog.getByTestId('seen-summary-revision')).toContainText(
        `Summary revision ${revision} · covers ${range} ·`,
      );
      await expect(dialog).toContainText('averyveryverylongpathsegment');
      expect(await scrollsSideways(page, '.seen-dialog')).toBe(false);
      await screenshot(page, testInfo, `what-the-model-saw-${size.name}`);
      await page.keyboard.press('Escape');
      await expect(dialog).toHaveCount(0);
    });
  }

  test('search snippets say they are cut, and a search with no hits takes the "Search match" mark away', async ({
    page,
  }, testInfo) => {
    await page.setViewportSize({ width: 1280, height: 800 });
    await useGuest(page, guest);
    await page.goto(`${app.baseUrl}/threads/${thread.id}`);
    const search = page.getByRole('searchbox', { name: 'Search messages' });
    await search.fill('lakeside');
    await search.press('Enter');
    const hit = page.getByRole('button', { name: /^#3 · You/ });
    await expect(hit.locator('.hit-snippet')).toHaveText(/^… .*lakeside.* …$/);
    await screenshot(page, testInfo, 'search-snippet');
    await hit.click();
    const target = page.getByRole('log', { name: 'Conversation' }).locator('[data-seq="3"]');
    await expect(target.getByText('Search match')).toBeVisible();
    await search.fill('zeppelin');
    await search.press('Enter');
    await expect(page.getByText('No messages match “zeppelin”')).toBeVisible();
    await expect(page.getByText('Search match')).toHaveCount(0);
  });

  test('a branch banner reads as one sentence from the left, and message tooltips sit beside their buttons', async ({
    page,
  }, testInfo) => {
    await page.setViewportSize({ width: 1280, height: 800 });
    await useGuest(page, guest);
    await page.goto(`${app.baseUrl}/threads/${thread.id}`);
    const conversation = page.getByRole('log', { name: 'Conversation' });
    const answer = conversation.locator('[data-seq="4"]');
    await answer.hover();
    const branch = answer.getByRole('button', { name: 'Branch from here at #4' });
    await branch.hover();
    // The tooltip is drawn level with its button, not above it over the message's text (once it has faded in).
    const placementOf = () =>
      branch.evaluate((element) => {
        const style = getComputedStyle(element, '::after');
        return {
          opacity: style.opacity,
          top: style.top,
          bottom: style.bottom,
          height: element.getBoundingClientRect().height,
        };
      });
    await expect.poll(async () => (await placementOf()).opacity).toBe('1');
    const placement = await placementOf();
    expect(parseFloat(placement.top)).toBeGreaterThanOrEqual(0);
    expect(parseFloat(placement.top)).toBeLessThanOrEqual(placement.height);
    await screenshot(page, testInfo, 'tooltip');

    await branch.click();
    const banner = page.getByRole('note');
    await expect(banner).toContainText('Branched from Offsite planning for the whole team in March at message #4');
    const bannerBox = (await banner.boundingBox())!;
    const linkBox = (await banner.getByRole('link').boundingBox())!;
    // "Branched from" then the link right after it: not spread across the width.
    expect(linkBox.x - bannerBox.x).toBeLessThan(160);
    await screenshot(page, testInfo, 'branch-banner');
    // The branch's window in transcript order too.
    await page.getByRole('button', { name: 'Memory', exact: true }).click();
    const seqs = (await page.getByRole('list', { name: 'Window entries' }).locator('.seq').allTextContents()).map(
      (text) => Number(text.slice(1)),
    );
    expect(seqs).toEqual([...seqs].sort((left, right) => left - right));
  });

  test('the admin threads table shows the summary as words, not markdown; the chart has a tool-definitions band', async ({
    page,
  }, testInfo) => {
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.goto(`${app.baseUrl}/admin`);
    await page.getByLabel('Admin token').fill(ADMIN_TOKEN);
    await page.getByRole('button', { name: 'Sign in' }).click();
    const row = page
      .getByRole('table', { name: 'Threads' })
      .getByRole('row')
      .filter({ has: page.getByRole('link', { name: 'Offsite planning for the whole team in March', exact: true }) });
    const preview = row.locator('td.preview').nth(1);
    await expect(preview).not.toHaveText('—');
    const text = (await preview.textContent())!;
    expect(text).not.toMatch(/^\s*[-*#]|\n|\*\*| - /);
    await screenshot(page, testInfo, 'admin-summary-column');

    // The thread's chart draws the tool definitions as a band of their own, and its caption names their share.
    await row.getByRole('link', { name: 'Offsite planning for the whole team in March', exact: true }).click();
    await expect(page.getByRole('img', { name: /Tokens per model call/ })).toBeVisible();
    await expect(page.locator('.u-legend')).toContainText('Tool definitions');
    await expect(page.locator('.chart-figure figcaption')).toContainText(/tool definitions \d+ of the last prompt/);
    await page.locator('.chart-figure').scrollIntoViewIfNeeded();
    await screenshot(page, testInfo, 'admin-chart-tool-band');
  });
});
