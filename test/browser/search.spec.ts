import { expect, test } from '@playwright/test';
import type { ContextPackDto, MessageContextDto, SendMessageResponseDto, ThreadDetailDto } from '../../src/shared/api';
import { expectNoAxeViolations } from './support/axe';
import { startBrowserApp, type BrowserApp } from './support/browser-app';
import { screenshot, useGuest } from './support/session';

test.describe('search', () => {
  let app: BrowserApp;
  test.beforeAll(async () => {
    // Folds early, so the second test's first message leaves the window and comes back through auto-recall.
    app = await startBrowserApp({ env: { SUMMARY_TRIGGER: 'messages=6', SUMMARY_KEEP: 'messages=2' } });
  });
  test.afterAll(async () => {
    await app?.stop();
  });

  test('a hit in another thread opens that thread at the message, loaded from older history and highlighted', async ({
    page,
  }, testInfo) => {
    const guest = await app.guest();
    const trip = await app.createThread(guest.token, 'Lisbon trip');
    // The ferry time is said first, then 89 more turns: the thread opens on its newest 50 of 180 messages, far from #1.
    await app.chat(guest.token, trip.id, [
      'The ferry to Cacilhas leaves at 07:40 from Cais do Sodré.',
      ...Array.from({ length: 89 }, (_, index) => `Trip note ${index + 1}`),
    ]);
    const groceries = await app.createThread(guest.token, 'Groceries');
    await app.chat(guest.token, groceries.id, ['Buy oranges and bread.']);
    await useGuest(page, guest);
    await page.goto(app.baseUrl);

    // The most recent thread opens.
    await expect(page.getByRole('heading', { level: 1, name: 'Groceries' })).toBeVisible();
    const search = page.getByRole('searchbox', { name: 'Search messages' });
    const results = page.getByRole('region', { name: 'Search results' });

    // This chat only: the ferry is not in Groceries.
    await page.getByRole('combobox', { name: 'Search in' }).selectOption('thread');
    await search.fill('ferry');
    await search.press('Enter');
    await expect(results.getByRole('status')).toHaveText('No messages match “ferry”');

    // All chats: hits grouped under their thread, the matched words marked.
    await page.getByRole('combobox', { name: 'Search in' }).selectOption('all');
    await search.fill('ferry Cacilhas');
    await search.press('Enter');
    const group = results.getByRole('region', { name: 'Matches in Lisbon trip' });
    await expect(group.getByRole('button')).toHaveCount(2);
    await expect(results.getByRole('region', { name: 'Matches in Groceries' })).toHaveCount(0);
    const hit = group.getByRole('button', { name: /^#1 · You/ });
    await expect(hit).toContainText('Cacilhas leaves at 07:40');
    await expect(hit.locator('mark')).toHaveText(['ferry', 'Cacilhas']);
    await screenshot(page, testInfo, 'search-results');
    await expectNoAxeViolations(page, { what: 'the search results' });

    const olderPages: string[] = [];
    page.on('request', (request) => {
      if (/\/api\/threads\/[\w-]+\/messages\?before=/.test(request.url())) olderPages.push(request.url());
    });
    await hit.click();
    await expect(page).toHaveURL(`${app.baseUrl}/threads/${trip.id}`);
    await expect(page.getByRole('heading', { level: 1, name: 'Lisbon trip' })).toBeVisible();
    const conversation = page.getByRole('log', { name: 'Conversation' });
    const target = conversation.locator('[data-seq="1"]');
    await expect(target).toContainText('The ferry to Cacilhas leaves at 07:40');
    await expect(target).toHaveClass(/search-hit/);
    await expect(target.getByText('Search match')).toBeVisible();
    await expect(target).toBeInViewport();
    // Only that message is marked, and the newest messages are still there below it.
    await expect(conversation.locator('.search-hit')).toHaveCount(1);
    await expect(conversation.getByText('Trip note 89', { exact: true })).toHaveCount(1);
    // The 130 messages between were loaded in one request, not page by page.
    expect(olderPages).toHaveLength(1);
    await screenshot(page, testInfo, 'search-hit-opened');
    await expectNoAxeViolations(page, { what: 'a thread opened at a search hit' });

    // Choosing a thread from the list drops the mark.
    await page
      .getByRole('navigation', { name: 'Threads' })
      .getByRole('button', { name: /^Groceries/ })
      .click();
    await expect(page.getByRole('heading', { level: 1, name: 'Groceries' })).toBeVisible();
    await page
      .getByRole('navigation', { name: 'Threads' })
      .getByRole('button', { name: /^Lisbon trip/ })
      .click();
    await expect(conversation.getByText('Trip note 89', { exact: true })).toBeVisible();
    await expect(conversation.locator('.search-hit')).toHaveCount(0);
  });

  test('the memory panel shows what auto-recall gave the model for the latest answer, linked to the messages', async ({
    page,
  }, testInfo) => {
    const guest = await app.guest();
    const thread = await app.createThread(guest.token, 'Vault');
    // The stub summarizer keeps CODE-n identifiers only: the vault code leaves the summary with the first fold.
    await app.chat(guest.token, thread.id, [
      'Please remember: the vault code is PLANT-8812.',
      ...[1, 2, 3, 4].map((turn) => `Filler ${turn} about gardening CODE-${500 + turn}.`),
    ]);
    const detail = () => app.api<ThreadDetailDto>(`/api/threads/${thread.id}`, { token: guest.token });
    await expect
      .poll(async () => (await detail()).context.coveredThroughSeq, { timeout: 30_000 })
      .toBeGreaterThanOrEqual(2);
    await expect.poll(async () => (await detail()).context.foldPending, { timeout: 30_000 }).toBe(false);
    const pack = await app.api<ContextPackDto>(`/api/threads/${thread.id}/context`, { token: guest.token });
    expect(pack.window.fromSeq).toBeGreaterThan(2);
    const asked = await app.api<SendMessageResponseDto>(`/api/threads/${thread.id}/messages`, {
      method: 'POST',
      token: guest.token,
      json: { content: 'What was the vault code I gave you?' },
    });
    const answer = asked.messages.at(-1)!;
    const seen = await app.api<MessageContextDto>(`/api/threads/${thread.id}/messages/${answer.id}/context`, {
      token: guest.token,
    });
    expect(seen.recalledSeqs).toContain(1);

    await useGuest(page, guest);
    await page.goto(`${app.baseUrl}/threads/${thread.id}`);
    await expect(page.getByRole('article', { name: 'Assistant message' }).last()).toContainText(
      'What was the vault code',
    );
    await page.getByRole('button', { name: 'Memory' }).click();
    const panel = page.getByRole('complementary', { name: 'Memory' });
    await expect(panel.getByTestId('recalled')).toHaveText(
      `Recalled: ${seen.recalledSeqs.map((seq) => `#${seq}`).join(', ')}`,
    );
    await screenshot(page, testInfo, 'memory-panel-recalled');
    await expectNoAxeViolations(page, { what: 'the memory panel with recalled messages' });
    // Like a citation: the link shows the recalled message in the transcript.
    await panel.getByRole('link', { name: '#1: show the recalled message' }).click();
    const first = page.getByRole('log', { name: 'Conversation' }).locator('[data-seq="1"]');
    await expect(first).toBeFocused();
    await expect(first).toBeInViewport();
    await expect(first).toContainText('PLANT-8812');
  });
});
