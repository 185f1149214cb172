import { expect, test, type Page } from '@playwright/test';
import { wireContentText } from '../../src/llm/count-chat-tokens';
import type { MessageDto, ThreadMemorySettingsDto } from '../../src/shared/api';
import { lastUserText, replyWithText, type StubResponder } from '../support/openai-stub';
import { expectNoAxeViolations } from './support/axe';
import { ADMIN_TOKEN, startBrowserApp, type BrowserApp } from './support/browser-app';
import { screenshot, useGuest } from './support/session';

test.describe('memory controls', () => {
  let app: BrowserApp;
  let answers = 0;
  /** While set, summarizer calls wait for it: the "memory is being rebuilt" state stays on screen. */
  let summaryGate: Promise<void> | null = null;

  const responder: StubResponder = async (request) => {
    if (request.kind !== 'summary') return replyWithText(`Answer ${++answers} to: ${lastUserText(request.body)}`);
    if (summaryGate) await summaryGate;
    const text = request.body.messages.map((message) => wireContentText(message.content)).join('\n');
    const codes = [...new Set(text.match(/CODE-\d+/g) ?? [])];
    // Every fold covers #1–#3 at least: these citations survive the out-of-range filter.
    return replyWithText(`Opening questions [#1–2]. Then [#3]. Identifiers: ${codes.join(', ') || 'none'}.`);
  };

  test.beforeAll(async () => {
    app = await startBrowserApp({
      responder,
      env: { SUMMARY_TRIGGER: 'messages=6', SUMMARY_KEEP: 'messages=2', PINNED_MAX_TOKENS: '60' },
    });
  });
  test.afterAll(async () => {
    await app?.stop();
  });

  /** A guest with a thread of `turns` answered messages, opened in the page. */
  async function openThread(page: Page, turns: string[]) {
    const guest = await app.guest();
    const thread = await app.createThread(guest.token, 'Controls test');
    await app.chat(guest.token, thread.id, turns);
    await useGuest(page, guest);
    await page.goto(`${app.baseUrl}/threads/${thread.id}`);
    await expect(page.getByRole('status', { name: /Connection: Connected/ })).toBeVisible();
    const conversation = page.getByRole('log', { name: 'Conversation' });
    await expect(conversation.getByText(turns.at(-1)!, { exact: true })).toBeVisible();
    return { guest, thread, conversation };
  }
  const openMemory = async (page: Page) => {
    await page.getByRole('button', { name: 'Memory', exact: true }).click();
    return page.getByRole('complementary', { name: 'Memory' });
  };

  test('pins a message: the pin shows on it and in the memory panel; past the cap a clear error', async ({
    page,
  }, testInfo) => {
    const long = `A long note to pin: ${Array.from({ length: 60 }, (_, index) => `word${index}`).join(' ')}.`;
    const { conversation } = await openThread(page, ['Short note CODE-11.', long]);
    const panel = await openMemory(page);
    await expect(panel.getByText('Nothing pinned')).toBeVisible();

    await conversation.getByRole('button', { name: 'Pin message #1' }).click();
    const first = conversation.locator('[data-seq="1"]');
    await expect(first.getByLabel('pinned', { exact: true })).toBeVisible();
    await expect(first.getByRole('button', { name: 'Unpin message #1' })).toHaveAttribute('aria-pressed', 'true');
    const pinnedList = panel.getByRole('list', { name: 'Pinned messages' });
    await expect(pinnedList.getByRole('listitem')).toHaveCount(1);
    await expect(pinnedList).toContainText('Short note CODE-11.');
    await expect(panel.getByText(/\d+ of 60 tokens pinned/)).toBeVisible();

    // The long one does not fit under the cap: refused, with what to do about it.
    await conversation.getByRole('button', { name: 'Pin message #3' }).click();
    await expect(
      page
        .getByRole('alert')
        .filter({ hasText: /tokens allowed for pinned messages are in use\. Unpin something first\./ }),
    ).toBeVisible();
    await expect(conversation.locator('[data-seq="3"]').getByLabel('pinned', { exact: true })).toHaveCount(0);
    await screenshot(page, testInfo, 'pin-cap-1440');
    await expectNoAxeViolations(page, { what: 'the memory panel with a pinned message' });

    // Unpin from the panel.
    await pinnedList.getByRole('button', { name: 'Unpin #1' }).click();
    await expect(first.getByLabel('pinned', { exact: true })).toHaveCount(0);
    await expect(panel.getByText('Nothing pinned')).toBeVisible();
  });

  test('edits the memory settings: errors next to the field, then window-only memory applied', async ({
    page,
  }, testInfo) => {
    await openThread(page, ['Settings please, CODE-21.']);
    const panel = await openMemory(page);
    const form = panel.getByRole('form', { name: 'Memory settings' });
    const trigger = form.getByLabel('Fold when');
    const keep = form.getByLabel('Keep after a fold');
    await expect(trigger).toHaveAttribute('placeholder', 'messages=6');

    await trigger.fill('sometimes');
    await form.getByRole('button', { name: 'Save settings' }).click();
    await expect(trigger).toHaveAttribute('aria-invalid', 'true');
    await expect(trigger).toHaveAccessibleDescription(/invalid term "sometimes"/);
    await screenshot(page, testInfo, 'settings-error-1440');

    await trigger.fill('');
    await keep.fill('messages=5');
    await form.getByRole('button', { name: 'Save settings' }).click();
    await expect(keep).toHaveAccessibleDescription(/keeps too many messages/);
    await expect(trigger).not.toHaveAttribute('aria-invalid', 'true');

    await keep.fill('messages=3');
    await form.getByLabel(/Window only/).check();
    await form.getByRole('button', { name: 'Save settings' }).click();
    await expect(form.getByRole('status')).toHaveText('Memory settings saved.');
    await expect(panel.getByText('No summary: this thread keeps window-only memory.')).toBeVisible();

    // Applied for good: a reload shows the thread's own settings.
    await page.reload();
    const again = (await openMemory(page)).getByRole('form', { name: 'Memory settings' });
    await expect(again.getByLabel('Keep after a fold')).toHaveValue('messages=3');
    await expect(again.getByLabel(/Window only/)).toBeChecked();
    await page.setViewportSize({ width: 375, height: 760 });
    await again.getByLabel('Keep after a fold').scrollIntoViewIfNeeded();
    await expect(again.getByLabel('Keep after a fold')).toBeInViewport();
    await screenshot(page, testInfo, 'settings-375');
  });

  test('starts a new context: a divider, earlier messages still there, undo until the next message', async ({
    page,
  }, testInfo) => {
    const { conversation } = await openThread(page, ['Before the marker CODE-31.', 'Still before CODE-32.']);
    await conversation.getByRole('button', { name: 'Start a new context here' }).click();
    const divider = conversation.getByRole('separator', { name: 'New context from #5: the model sees nothing above' });
    await expect(divider).toBeVisible();
    await expect(conversation.getByText('Before the marker CODE-31.', { exact: true })).toBeVisible();
    await screenshot(page, testInfo, 'divider-1440');
    await divider.getByRole('button', { name: 'Undo' }).click();
    await expect(divider).toHaveCount(0);
    await expect(conversation.getByRole('button', { name: 'Start a new context here' })).toBeVisible();

    // Again, then a message: the divider stays above it and can no longer be undone.
    await conversation.getByRole('button', { name: 'Start a new context here' }).click();
    await expect(divider).toBeVisible();
    const box = page.getByRole('textbox', { name: 'Message' });
    await box.fill('After the marker.');
    await box.press('Enter');
    await expect(conversation.getByText(/^Answer \d+ to: After the marker\.$/)).toBeVisible();
    await expect(divider).toBeVisible();
    await expect(divider.getByRole('button', { name: 'Undo' })).toHaveCount(0);
    const dividerY = (await divider.boundingBox())!.y;
    expect((await conversation.locator('[data-seq="4"]').boundingBox())!.y).toBeLessThan(dividerY);
    expect((await conversation.locator('[data-seq="5"]').boundingBox())!.y).toBeGreaterThan(dividerY);
    const panel = await openMemory(page);
    await expect(panel.getByRole('list', { name: 'Window entries' })).not.toContainText('CODE-31');
    await page.setViewportSize({ width: 375, height: 760 });
    await page.getByRole('button', { name: 'Close memory panel' }).click();
    await expect(divider).toBeVisible();
    await screenshot(page, testInfo, 'divider-375');
  });

  test('deletes a message with its answer, or only the message; a folded one rebuilds memory', async ({
    page,
  }, testInfo) => {
    const turns = ['My locker code is CODE-4242.', 'Note CODE-42.', 'Note CODE-43.', 'Note CODE-44.'];
    const { guest, thread, conversation } = await openThread(page, turns);
    // The first turn was folded into the summary.
    await expect
      .poll(
        async () =>
          (
            await app.api<{ context: { coveredThroughSeq: number; foldPending: boolean } }>(
              `/api/threads/${thread.id}`,
              { token: guest.token },
            )
          ).context.coveredThroughSeq,
        { timeout: 30_000 },
      )
      .toBeGreaterThanOrEqual(2);

    let release = () => {};
    summaryGate = new Promise<void>((resolve) => {
      release = resolve;
    });
    try {
      await conversation.getByRole('button', { name: 'Delete message #1' }).click();
      await conversation.getByRole('button', { name: 'Delete with its answer' }).click();
      await expect(conversation.getByRole('article', { name: 'You message, deleted' })).toHaveCount(1);
      await expect(conversation.getByRole('article', { name: 'Assistant message, deleted' })).toHaveCount(1);
      await expect(conversation.getByText('Message deleted')).toHaveCount(2);
      await expect(page.getByText('CODE-4242')).toHaveCount(0);
      await expect(page.getByRole('status').filter({ hasText: 'Memory is being rebuilt' })).toBeVisible();
      await screenshot(page, testInfo, 'deleted-rebuilding-1440');
    } finally {
      summaryGate = null;
      release();
    }
    await expect(page.getByRole('status').filter({ hasText: 'Memory is being rebuilt' })).toHaveCount(0, {
      timeout: 30_000,
    });

    // Only this message: its answer stays.
    await conversation.getByRole('button', { name: 'Delete message #7' }).click();
    await conversation.getByRole('button', { name: 'Delete only this message' }).click();
    await expect(conversation.getByRole('article', { name: 'You message, deleted' })).toHaveCount(2);
    await expect(conversation.getByText('Note CODE-44.', { exact: true })).toHaveCount(0);
    await expect(conversation.getByText(/^Answer \d+ to: Note CODE-44\.$/)).toBeVisible();
    const transcript = await app.api<{ messages: MessageDto[] }>(`/api/threads/${thread.id}/messages`, {
      token: guest.token,
    });
    expect(transcript.messages.filter((message) => message.deleted).map((message) => message.seq)).toEqual([1, 2, 7]);
  });

  test('regenerates the last answer: a new one, the old one kept as a collapsed previous answer', async ({
    page,
  }, testInfo) => {
    const { conversation } = await openThread(page, ['Tell me about CODE-51.']);
    const old = conversation.getByRole('article', { name: 'Assistant message' });
    const oldText = (await old.innerText()).match(/Answer \d+ to: Tell me about CODE-51\./)![0];
    await old.getByRole('button', { name: 'Regenerate' }).click();

    const previous = conversation.getByRole('article', { name: 'Previous answer, replaced' });
    await expect(previous).toBeVisible();
    await expect(previous.getByText(oldText)).toBeHidden();
    const fresh = conversation.getByRole('article', { name: 'Assistant message' });
    await expect(fresh).toHaveCount(1);
    await expect(fresh).toContainText(/Answer \d+ to: Tell me about CODE-51\./);
    expect(await fresh.innerText()).not.toContain(oldText);
    await expect(fresh.getByRole('button', { name: 'Regenerate' })).toBeVisible();
    await previous.getByText('replaced by a regenerated one').click();
    await expect(previous.getByText(oldText)).toBeVisible();
    await screenshot(page, testInfo, 'regenerated-1440');
  });

  test('a summary citation scrolls the transcript to the cited message, loading older history', async ({
    page,
  }, testInfo) => {
    const turns = Array.from({ length: 30 }, (_, index) => `History CODE-${600 + index}.`);
    const { guest, thread, conversation } = await openThread(page, turns);
    await expect
      .poll(
        async () =>
          (
            await app.api<{ context: { coveredThroughSeq: number } }>(`/api/threads/${thread.id}`, {
              token: guest.token,
            })
          ).context.coveredThroughSeq,
        { timeout: 30_000 },
      )
      .toBeGreaterThan(20);
    // The join shows the newest 50 of 60 messages: #1 is not loaded.
    await expect(conversation.locator('[data-seq="1"]')).toHaveCount(0);

    const panel = await openMemory(page);
    // The stub's summarizer writes the same text at every fold, and each fold appends it as a segment: the first copy.
    const citation = panel.locator('.summary-text').getByRole('link', { name: '#1–2: show messages #1 to #2' }).first();
    await expect(citation).toBeVisible({ timeout: 30_000 });
    await expect(citation).toHaveText('#1–2');
    await expect(
      panel.locator('.summary-text').getByRole('link', { name: '#3: show message #3' }).first(),
    ).toBeVisible();
    await expectNoAxeViolations(page, { what: 'the memory panel with summary citations' });
    await citation.click();
    const cited = conversation.locator('[data-seq="1"]');
    await expect(cited).toBeInViewport();
    await expect(cited).toContainText('History CODE-600.');
    await expect(cited).toBeFocused();
    await expect(conversation.locator('.cited')).toHaveCount(2);
    await screenshot(page, testInfo, 'citation-1440');

    // At 375 px the panel covers the transcript: a citation closes it and shows the message.
    await page.setViewportSize({ width: 375, height: 760 });
    await conversation.evaluate((element) => {
      element.scrollTop = element.scrollHeight;
    });
    const narrow = page.getByRole('complementary', { name: 'Memory' });
    await expect(narrow).toBeVisible();
    await screenshot(page, testInfo, 'memory-panel-375');
    await narrow.locator('.summary-text').getByRole('link', { name: '#3: show message #3' }).first().click();
    await expect(narrow).toHaveCount(0);
    await expect(conversation.locator('[data-seq="3"]')).toBeInViewport();
    await screenshot(page, testInfo, 'citation-375');
  });

  test("an admin edits a thread's summary prompt in the console", async ({ page }, testInfo) => {
    const guest = await app.guest();
    const thread = await app.createThread(guest.token, 'Prompted thread');
    await app.chat(guest.token, thread.id, ['Hello CODE-71.']);
    await page.goto(`${app.baseUrl}/admin`);
    await page.getByLabel('Admin token').fill(ADMIN_TOKEN);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect(page.getByRole('heading', { name: 'Queue health' })).toBeVisible();
    await page.getByRole('table', { name: 'Threads' }).getByRole('link', { name: 'Prompted thread' }).click();

    const editor = page.getByRole('region', { name: 'Summary prompt' });
    const prompt = editor.getByRole('textbox', { name: 'Summary prompt' });
    await prompt.fill('   ');
    await editor.getByRole('button', { name: 'Save prompt' }).click();
    await expect(editor.getByRole('alert')).toContainText('must be 1 to 8000 characters');
    await expect(prompt).toHaveAttribute('aria-invalid', 'true');

    const text =
      'You keep the running summary of this support chat. Two lines. Only cite #{{fromSeq}} to #{{throughSeq}}.';
    await prompt.fill(text);
    await editor.getByRole('button', { name: 'Save prompt' }).click();
    await expect(editor.getByRole('status')).toHaveText('Summary prompt saved.');
    await screenshot(page, testInfo, 'admin-summary-prompt');
    const settings = await app.api<ThreadMemorySettingsDto>(`/api/threads/${thread.id}/settings`, {
      token: guest.token,
    });
    expect(settings.summaryPrompt).toBe(text);
    await page.reload();
    await expect(page.getByRole('region', { name: 'Summary prompt' }).getByRole('textbox')).toHaveValue(text);
  });
});
