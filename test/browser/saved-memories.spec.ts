import { expect, test } from '@playwright/test';
import type { SavedMemoryListDto, SendMessageResponseDto } from '../../src/shared/api';
import {
  echoResponder,
  lastUserText,
  replyWithText,
  replyWithToolCalls,
  type StubResponder,
} from '../support/openai-stub';
import { summaryResponder } from '../support/summary-stub';
import { expectNoAxeViolations } from './support/axe';
import { startBrowserApp, type BrowserApp } from './support/browser-app';
import { screenshot, useGuest } from './support/session';

/** "Remember: <fact>" makes the model call save_memory with the fact. */
const chat: StubResponder = (request) => {
  if (request.body.messages.at(-1)?.role === 'tool') return replyWithText('Noted, I will remember that.');
  const asked = /^Remember: (.+)$/.exec(lastUserText(request.body));
  return asked ? replyWithToolCalls([{ name: 'save_memory', arguments: { text: asked[1] } }]) : echoResponder(request);
};

test.describe('saved memories', () => {
  let app: BrowserApp;
  test.beforeAll(async () => {
    app = await startBrowserApp({ responder: summaryResponder({ chat }) });
  });
  test.afterAll(async () => {
    await app?.stop();
  });

  test("lists the model's proposal with Approve and Dismiss; approved, it is saved with its source (opening the chat at that message); add, edit and delete items", async ({
    page,
  }, testInfo) => {
    const guest = await app.guest();
    const passport = await app.createThread(guest.token, 'Passport');
    await app.chat(guest.token, passport.id, ['Remember: The passport number is C4R55T901.']);
    await app.chat(guest.token, passport.id, ['Remember: My PIN is 4321.']);
    const groceries = await app.createThread(guest.token, 'Groceries');
    await app.chat(guest.token, groceries.id, ['Buy oranges and bread.']);
    await useGuest(page, guest);
    await page.goto(app.baseUrl);
    await expect(page.getByRole('heading', { level: 1, name: 'Groceries' })).toBeVisible();

    await page.getByRole('button', { name: 'Saved memories' }).click();
    await expect(page).toHaveURL(`${app.baseUrl}/memories`);
    const view = page.getByRole('region', { name: 'Saved memories' });
    // SAVE_MEMORY_TOOL=confirm (the default): what the model saved is a proposal, sent to no model yet.
    const proposals = view.getByRole('list', { name: 'Proposed by the model' });
    const proposal = proposals.getByRole('listitem', { name: 'The passport number is C4R55T901.' });
    await expect(proposal).toBeVisible();
    await expect(proposal.getByText('Not sent until you approve it')).toBeVisible();
    await expect(proposals.getByRole('listitem')).toHaveCount(2);
    await expectNoAxeViolations(page, { include: '.saved-memories', what: 'saved memories with proposals' });
    await screenshot(page, testInfo, 'saved-memories-proposals');
    await proposals.getByRole('button', { name: 'Dismiss “My PIN is 4321.”' }).click();
    await expect(proposals.getByRole('listitem', { name: 'My PIN is 4321.' })).toHaveCount(0);
    await proposal.getByRole('button', { name: 'Approve “The passport number is C4R55T901.”' }).click();
    await expect(proposals).toHaveCount(0);
    const list = view.getByRole('list', { name: 'Saved memories' });
    const saved = list.getByRole('listitem', { name: 'The passport number is C4R55T901.' });
    await expect(saved).toBeVisible();
    const approved = await app.api<SavedMemoryListDto>('/api/memory', { token: guest.token });
    expect(approved.items.map((item) => [item.text, item.status, item.inContext])).toEqual([
      ['The passport number is C4R55T901.', 'active', true],
    ]);
    await expect(saved.getByRole('link', { name: 'From “Passport”, message #1' })).toBeVisible();

    // Add: the new item is listed first, and the server has it.
    await view.getByRole('textbox', { name: 'New saved memory' }).fill('I am vegetarian.');
    await view.getByRole('button', { name: 'Add' }).click();
    const added = list.getByRole('listitem', { name: 'I am vegetarian.' });
    await expect(added).toBeVisible();
    await expect(list.getByRole('listitem').first()).toHaveAccessibleName('I am vegetarian.');
    await expect(added.getByText('Added by you')).toBeVisible();
    await screenshot(page, testInfo, 'saved-memories');

    // Edit.
    await added.getByRole('button', { name: 'Edit “I am vegetarian.”' }).click();
    await list.getByRole('textbox', { name: 'Edit saved memory' }).fill('I am vegan.');
    await list.getByRole('button', { name: 'Save' }).click();
    const edited = list.getByRole('listitem', { name: 'I am vegan.' });
    await expect(edited).toBeVisible();
    await expect(list.getByRole('listitem', { name: 'I am vegetarian.' })).toHaveCount(0);

    // An empty text cannot be added.
    await view.getByRole('textbox', { name: 'New saved memory' }).fill('   ');
    await expect(view.getByRole('button', { name: 'Add' })).toBeDisabled();

    // Delete.
    await edited.getByRole('button', { name: 'Delete “I am vegan.”' }).click();
    await expect(list.getByRole('listitem', { name: 'I am vegan.' })).toHaveCount(0);
    const items = await app.api<SavedMemoryListDto>('/api/memory', { token: guest.token });
    expect(items.items.map((item) => item.text)).toEqual(['The passport number is C4R55T901.']);

    // The source opens its chat at that message, where the transcript notes the save.
    await saved.getByRole('link', { name: 'From “Passport”, message #1' }).click();
    await expect(page).toHaveURL(`${app.baseUrl}/threads/${passport.id}`);
    await expect(page.getByRole('heading', { level: 1, name: 'Passport' })).toBeVisible();
    const conversation = page.getByRole('log', { name: 'Conversation' });
    const source = conversation.locator('[data-seq="1"]');
    await expect(source).toContainText('Remember: The passport number is C4R55T901.');
    await expect(source).toHaveClass(/search-hit/);
    await expect(
      conversation.getByText(
        '[memory] Proposed for your saved memories (approve or dismiss it in Saved memories): "The passport number is C4R55T901."',
      ),
    ).toBeVisible();
  });

  test('the memory panel lists what comes from other chats (linked), and "What the model saw" shows the saved memories', async ({
    page,
  }) => {
    const guest = await app.guest();
    const papers = await app.createThread(guest.token, 'Travel papers');
    await app.chat(guest.token, papers.id, ['My passport number is C4R55T901.']);
    await app.api('/api/memory', { method: 'POST', token: guest.token, json: { text: 'I am vegetarian.' } });
    const later = await app.createThread(guest.token, 'A new day');
    const asked = await app.api<SendMessageResponseDto>(`/api/threads/${later.id}/messages`, {
      method: 'POST',
      token: guest.token,
      json: { content: 'What is my passport number?' },
    });
    const answer = asked.messages.at(-1)!;

    await useGuest(page, guest);
    await page.goto(`${app.baseUrl}/threads/${later.id}`);
    await expect(page.getByRole('status', { name: /Connection: Connected/ })).toBeVisible();
    await page.getByRole('button', { name: `What the model saw for answer #${answer.seq}` }).click();
    const dialog = page.getByRole('dialog', { name: `What the model saw for answer #${answer.seq}` });
    await expect(dialog.getByTestId('seen-saved-memories')).toHaveText('I am vegetarian.');
    await expect(dialog.getByTestId('seen-recalled-elsewhere')).toContainText('From other chats: Travel papers #1');
    await dialog.getByRole('button', { name: 'Close' }).click();

    await page.getByRole('button', { name: 'Memory', exact: true }).click();
    const line = page.getByTestId('recalled-elsewhere');
    await expect(line).toContainText('From other chats: Travel papers #1');
    await line.getByRole('link', { name: 'Open Travel papers at message #1' }).click();
    await expect(page).toHaveURL(`${app.baseUrl}/threads/${papers.id}`);
    await expect(page.getByRole('log', { name: 'Conversation' }).locator('[data-seq="1"]')).toHaveClass(/search-hit/);
  });
  test('the settings form\'s "Recall from": this chat only takes the other chats out of the next call, and stays so', async ({
    page,
  }) => {
    const guest = await app.guest();
    const papers = await app.createThread(guest.token, 'Visa papers');
    await app.chat(guest.token, papers.id, ['My visa number is V-77342.']);
    const later = await app.createThread(guest.token, 'Another day');
    await app.chat(guest.token, later.id, ['What is my visa number?']);

    await useGuest(page, guest);
    await page.goto(`${app.baseUrl}/threads/${later.id}`);
    await expect(page.getByRole('status', { name: /Connection: Connected/ })).toBeVisible();
    await page.getByRole('button', { name: 'Memory', exact: true }).click();
    const panel = page.getByRole('complementary', { name: 'Memory' });
    await expect(panel.getByTestId('recalled-elsewhere')).toContainText('From other chats: Visa papers #1');
    const form = panel.getByRole('form', { name: 'Memory settings' });
    const scope = form.getByLabel('Recall from');
    await expect(scope).toHaveValue('');
    await expect(scope.locator('option:checked')).toHaveText('Default (all my chats)');

    await scope.selectOption({ label: 'This chat only' });
    await form.getByRole('button', { name: 'Save settings' }).click();
    await expect(form.getByRole('status')).toHaveText('Memory settings saved.');
    await expect(panel.getByTestId('recalled-elsewhere')).toHaveCount(0);
    const pack = await app.api<{ recalledElsewhere: unknown[] }>(`/api/threads/${later.id}/context`, {
      token: guest.token,
    });
    expect(pack.recalledElsewhere).toEqual([]);
    const shown = await app.api<{ settings: { recallScope: string | null } }>(`/api/threads/${later.id}`, {
      token: guest.token,
    });
    expect(shown.settings.recallScope).toBe('thread');

    await page.reload();
    await page.getByRole('button', { name: 'Memory', exact: true }).click();
    await expect(page.getByRole('form', { name: 'Memory settings' }).getByLabel('Recall from')).toHaveValue('thread');
  });
});
