import { expect, test, type Page } from '@playwright/test';
import { lastUserText, replyWithText, type StubResponder } from '../support/openai-stub';
import { startBrowserApp, type BrowserApp } from './support/browser-app';
import { screenshot, useGuest } from './support/session';

test.describe('edit and branch', () => {
  let app: BrowserApp;
  let answers = 0;
  const responder: StubResponder = (request) => replyWithText(`Answer ${++answers} to: ${lastUserText(request.body)}`);

  test.beforeAll(async () => {
    app = await startBrowserApp({ responder });
  });
  test.afterAll(async () => {
    await app?.stop();
  });

  async function openThread(page: Page, turns: string[]) {
    const guest = await app.guest();
    const thread = await app.createThread(guest.token, 'Trip plans');
    await app.chat(guest.token, thread.id, turns);
    await useGuest(page, guest);
    await page.goto(`${app.baseUrl}/threads/${thread.id}`);
    await expect(page.getByRole('status', { name: /Connection: Connected/ })).toBeVisible();
    const conversation = page.getByRole('log', { name: 'Conversation' });
    await expect(conversation.getByText(turns.at(-1)!, { exact: true })).toBeVisible();
    return { thread, conversation };
  }

  test('edits a message: the answer to the new text comes in a branch, and the original thread is one click away', async ({
    page,
  }, testInfo) => {
    const { thread, conversation } = await openThread(page, ['Plan a trip to Rome.', 'Book a hotel near CODE-31.']);
    await conversation.getByRole('button', { name: 'Edit message #3' }).click();
    const editor = conversation.getByRole('textbox', { name: 'Edit message #3' });
    await expect(editor).toHaveValue('Book a hotel near CODE-31.');
    await editor.fill('Book a hotel near CODE-32.');
    await editor.press('Enter');

    // The branch opens: its origin linked, the earlier turn kept, the edited text answered, the old text gone.
    await expect(page).not.toHaveURL(new RegExp(thread.id));
    const origin = page.getByRole('note');
    await expect(origin).toContainText('Branched from Trip plans at message #2');
    await expect(page.getByRole('heading', { level: 1 })).toHaveText('Trip plans (branch)');
    await expect(conversation.getByText('Plan a trip to Rome.', { exact: true })).toBeVisible();
    await expect(conversation.getByText('Book a hotel near CODE-32.', { exact: true })).toBeVisible();
    await expect(conversation.getByText(/Answer \d+ to: Book a hotel near CODE-32\./)).toBeVisible();
    await expect(conversation.getByText('CODE-31')).toHaveCount(0);
    await screenshot(page, testInfo, 'edited-branch');

    // Back to the original: untouched, and it lists the branch at the fork point.
    await origin.getByRole('link', { name: 'Trip plans' }).click();
    await expect(page).toHaveURL(new RegExp(`/threads/${thread.id}$`));
    await expect(conversation.getByText('Book a hotel near CODE-31.', { exact: true })).toBeVisible();
    await expect(conversation.getByText(/Answer \d+ to: Book a hotel near CODE-31\./)).toBeVisible();
    await expect(conversation.getByText('CODE-32')).toHaveCount(0);
    const branches = conversation.locator('[data-seq="2"]').getByRole('navigation', { name: 'Branches from here' });
    await expect(branches.getByRole('link', { name: 'Trip plans (branch)' })).toBeVisible();
    await screenshot(page, testInfo, 'original-with-branch');
  });

  test('branches from an answer into a new thread that holds the conversation up to it', async ({ page }) => {
    const { conversation } = await openThread(page, ['First question.', 'Second question.']);
    await conversation.getByRole('button', { name: 'Branch from here at #2' }).click();
    await expect(page.getByRole('note')).toContainText('Branched from Trip plans at message #2');
    await expect(conversation.getByText('First question.', { exact: true })).toBeVisible();
    await expect(conversation.getByText('Second question.', { exact: true })).toHaveCount(0);
    // The branch goes on by itself.
    await page.getByRole('textbox', { name: 'Message', exact: true }).fill('A question only in the branch.');
    await page.keyboard.press('Enter');
    await expect(conversation.getByText(/Answer \d+ to: A question only in the branch\./)).toBeVisible();
  });

  test('deleting a message a branch also holds says so, and deletes it there too on request', async ({ page }) => {
    const { conversation } = await openThread(page, ['My card ends in CODE-77.', 'Another question.']);
    await conversation.getByRole('button', { name: 'Branch from here at #2' }).click();
    await expect(page.getByRole('note')).toContainText('Branched from Trip plans at message #2');
    await page.getByRole('note').getByRole('link', { name: 'Trip plans' }).click();
    await expect(conversation.getByText('Another question.', { exact: true })).toBeVisible();

    await conversation.getByRole('button', { name: 'Delete message #1' }).click();
    await conversation.getByRole('button', { name: 'Delete with its answer' }).click();
    const notice = page.getByRole('alert').filter({ hasText: 'still holds a copy' });
    await expect(notice).toContainText('Trip plans (branch)');
    await notice.getByRole('button', { name: 'Delete it there too' }).click();
    await expect(notice).toHaveCount(0);
    // In the branch too, only a tombstone is left.
    await conversation.locator('[data-seq="2"]').getByRole('link', { name: 'Trip plans (branch)' }).click();
    await expect(page.getByRole('note')).toContainText('Branched from');
    await expect(conversation.locator('[data-seq="1"]')).toContainText('Message deleted');
    await expect(conversation.locator('[data-seq="2"]')).toContainText('Message deleted');
    await expect(conversation.getByText('CODE-77')).toHaveCount(0);
  });
});
