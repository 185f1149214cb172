import { expect, test } from '@playwright/test';
import type { MessageContextDto, SendMessageResponseDto, ThreadDetailDto } from '../../src/shared/api';
import { expectNoAxeViolations } from './support/axe';
import { ADMIN_TOKEN, startBrowserApp, type BrowserApp } from './support/browser-app';
import { screenshot, useGuest } from './support/session';

/** The operator's instructions: shown to admins only. */
const SYSTEM_PROMPT = 'Confidential routing rule: escalate refunds to desk 7.';

test.describe('what the model saw', () => {
  let app: BrowserApp;
  test.beforeAll(async () => {
    app = await startBrowserApp({ env: { SUMMARY_TRIGGER: 'messages=6', SUMMARY_KEEP: 'messages=2', SYSTEM_PROMPT } });
  });
  test.afterAll(async () => {
    await app?.stop();
  });

  test('opens on an answer given after a fold: the summary revision and the window seqs the model got, in the chat and the admin console', async ({
    page,
  }, testInfo) => {
    const guest = await app.guest();
    const thread = await app.createThread(guest.token, 'Fold then ask');
    await app.chat(
      guest.token,
      thread.id,
      [1, 2, 3, 4, 5].map((turn) => `Note ${turn}: remember CODE-${300 + turn}.`),
    );
    await expect
      .poll(
        async () =>
          (await app.api<ThreadDetailDto>(`/api/threads/${thread.id}`, { token: guest.token })).context.revision,
        { timeout: 30_000 },
      )
      .toBeGreaterThanOrEqual(1);
    await expect
      .poll(
        async () =>
          (await app.api<ThreadDetailDto>(`/api/threads/${thread.id}`, { token: guest.token })).context.foldPending,
        { timeout: 30_000 },
      )
      .toBe(false);
    const asked = await app.api<SendMessageResponseDto>(`/api/threads/${thread.id}/messages`, {
      method: 'POST',
      token: guest.token,
      json: { content: 'Which codes do you know?' },
    });
    const answer = asked.messages.at(-1)!;
    // What the server stored for that answer: the revision and the window it was given.
    const seen = await app.api<MessageContextDto>(`/api/threads/${thread.id}/messages/${answer.id}/context`, {
      token: guest.token,
    });
    expect(seen.summary?.revision).toBeGreaterThanOrEqual(1);
    expect(seen.windowSeqs.at(-1)).toBe(asked.userMessage.seq);
    const windowText = `Window ${seen.windowSeqs.map((seq) => `#${seq}`).join(', ')} · pinned none`;

    await useGuest(page, guest);
    await page.goto(`${app.baseUrl}/threads/${thread.id}`);
    await expect(page.getByRole('status', { name: /Connection: Connected/ })).toBeVisible();
    // Every stored answer offers the view.
    await expect(page.getByRole('button', { name: /What the model saw for answer #\d+/ })).toHaveCount(6);
    await page.getByRole('button', { name: `What the model saw for answer #${answer.seq}` }).click();
    const dialog = page.getByRole('dialog', { name: `What the model saw for answer #${answer.seq}` });
    await expect(dialog).toBeVisible();
    await expect(dialog.getByTestId('seen-summary-revision')).toContainText(
      `Summary revision ${seen.summary?.revision} · covers #1–#`,
    );
    await expect(dialog).toContainText('CODE-301');
    await expect(dialog.getByTestId('seen-window-seqs')).toHaveText(windowText);
    await expect(dialog).toContainText('Which codes do you know?');
    await expect(dialog.getByRole('table', { name: 'Tokens per part' })).toContainText('Summary');
    // The parts read against the window: window − reserve = budget; tool definitions + the pack = the prompt.
    await expect(dialog.getByTestId('seen-budget')).toContainText(/reserved for the answer = budget [\d,]+ tokens/);
    await expect(dialog.getByTestId('seen-budget')).toContainText(
      /This call: tool definitions [\d,]+ \+ the pack [\d,]+/,
    );
    // The owner sees the system prompt's size and hash, never its text.
    await expect(dialog.getByTestId('seen-system-prompt-hidden')).toHaveText(
      `System prompt (hidden): ${seen.systemPrefix?.tokens} tokens, hash ${seen.systemPrefix?.hash.slice(0, 12)}…`,
    );
    await expect(dialog).not.toContainText('desk 7');
    await screenshot(page, testInfo, 'what-the-model-saw');
    await expectNoAxeViolations(page, { what: 'the "what the model saw" dialog over the chat' });
    await dialog.getByRole('button', { name: 'Close' }).click();
    await expect(dialog).toHaveCount(0);

    // The admin console opens the same view from the thread's model calls.
    await page.goto(`${app.baseUrl}/admin`);
    await page.getByLabel('Admin token').fill(ADMIN_TOKEN);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('table', { name: 'Threads' }).getByRole('link', { name: 'Fold then ask' }).click();
    const calls = page.getByRole('table', { name: 'Model calls' });
    await calls
      .getByRole('row')
      .filter({ hasText: 'chat' })
      .first()
      .getByRole('button', { name: 'What the model saw' })
      .click();
    const adminDialog = page.getByRole('dialog', { name: /What the model saw for the call of/ });
    await expect(adminDialog.getByTestId('seen-summary-revision')).toContainText(
      `Summary revision ${seen.summary?.revision}`,
    );
    await expect(adminDialog.getByTestId('seen-window-seqs')).toHaveText(windowText);
    await expect(adminDialog).toContainText(SYSTEM_PROMPT);
    await expect(adminDialog.getByTestId('seen-system-prompt-hidden')).toHaveCount(0);
    await screenshot(page, testInfo, 'what-the-model-saw-admin');
    await expectNoAxeViolations(page, { what: 'the "what the model saw" dialog in the admin console' });
  });
});
