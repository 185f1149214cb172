import { describe, expect, it } from 'vitest';
import { RECALL_ELSEWHERE_HEADING, RECALL_HEADING } from '../../src/core/context';
import { RECALL_END } from '../../src/core/context/build-recall-slot';
import { wireContentText } from '../../src/llm/count-chat-tokens';
import type { ContextPackDto, MessageContextDto, ThreadDto, ThreadMemorySettingsDto } from '../../src/shared/api';
import { useChatServer } from '../support/chat-server';
import {
  echoResponder,
  lastUserText,
  replyWithText,
  replyWithToolCalls,
  type StubRequest,
  type StubResponder,
} from '../support/openai-stub';
import { memoryKit, query } from '../memory/memory-test-kit';

const PASSPORT = 'C4R55T901';

/**
 * The recall slot of a chat request, or '': user-level text under RECALL_HEADING (its own user message before the
 * newest one, or joined to the newest user turn in strict templates), through RECALL_END. Never system authority.
 */
function recallSlot(request: StubRequest | undefined): string {
  const message = request?.body.messages.find((candidate) =>
    wireContentText(candidate.content).includes(RECALL_HEADING),
  );
  if (!message) return '';
  expect(message.role).toBe('user');
  const text = wireContentText(message.content);
  const start = text.indexOf(RECALL_HEADING);
  const end = text.indexOf(RECALL_END, start);
  return end === -1 ? text.slice(start) : text.slice(start, end + RECALL_END.length);
}

/** Every text the model was sent. */
function everything(request: StubRequest | undefined): string {
  return (request?.body.messages ?? []).map((message) => wireContentText(message.content)).join('\n');
}

/** "Search: <words>" makes the model call search_transcript; its result gets a short reply. */
const responder: StubResponder = (request) => {
  if (request.body.messages.at(-1)?.role === 'tool') return replyWithText('Found it.');
  const asked = /^Search: (.+)$/.exec(lastUserText(request.body));
  if (asked) return replyWithToolCalls([{ name: 'search_transcript', arguments: { query: asked[1] } }]);
  return echoResponder(request);
};

describe('cross-thread recall: what was said in one chat reaches the model in the next chat of the same user', () => {
  const server = useChatServer({ stub: { responder } });
  const kit = memoryKit(server);
  const lastChat = () => server.stub.requests.filter((request) => request.kind === 'chat').at(-1);

  it('reaches a new thread, cited by chat, once per original; never the fork family, another user, a thread set to its own scope, or a forgotten message', async () => {
    const first = await kit.createThread('Travel papers');
    const said = await kit.send(first.id, `My passport number is ${PASSPORT}, please keep it in mind.`);
    const answer = said.messages.at(-1)!;
    // A fork of the first chat, with something said only on the fork's side.
    const forked = await server.app.api(`/api/threads/${first.id}/fork`, {
      method: 'POST',
      token: server.token,
      json: { atMessageId: answer.id },
    });
    expect(forked.status).toBe(201);
    const fork = (await forked.json()) as ThreadDto;
    await kit.send(fork.id, 'Fork-only note: the zebra code is ZEBRA-42.');

    // A new chat: the detail comes from the first chat (the fork's copies count once), marked with its chat.
    const second = await kit.createThread('A new day');
    const asked = await kit.send(second.id, 'What is my passport number?');
    const slot = recallSlot(lastChat());
    expect(slot).toContain(RECALL_ELSEWHERE_HEADING);
    expect(slot).toContain(`[chat:${first.id}#1] · chat "Travel papers" · user · `);
    expect(slot).toContain(`My passport number is ${PASSPORT}`);
    expect(slot.split('\n').filter((line) => line.includes(`· user · `) && line.includes(PASSPORT))).toHaveLength(1);
    expect(slot).not.toContain(`[chat:${fork.id}#1]`);
    // The manifest records it by thread and seq; what the model saw names the chat.
    const calls = await query<{ elsewhere: { threadId: string; seq: number }[] }>(
      server.app,
      `SELECT recalled_elsewhere AS elsewhere FROM model_calls WHERE thread_id = $1 AND purpose = 'chat' ORDER BY created_at DESC LIMIT 1`,
      [second.id],
    );
    expect(calls[0]?.elsewhere).toContainEqual({ threadId: first.id, seq: 1 });
    const seen = (await (
      await server.app.api(`/api/threads/${second.id}/messages/${asked.messages.at(-1)!.id}/context`, {
        token: server.token,
      })
    ).json()) as MessageContextDto;
    expect(seen.recalledElsewhere).toContainEqual({ threadId: first.id, seq: 1, title: 'Travel papers' });
    const preview = (await (
      await server.app.api(`/api/threads/${second.id}/context`, { token: server.token })
    ).json()) as ContextPackDto;
    expect(preview.recalledElsewhere).toContainEqual({ threadId: first.id, seq: 1, title: 'Travel papers' });

    // The fork family is never a source: the first chat does not get what was said after the fork, nor the fork the first chat's.
    await kit.send(first.id, 'What is the zebra code?');
    expect(everything(lastChat())).not.toContain('ZEBRA-42');
    await kit.send(fork.id, 'Tell me the passport number again.');
    expect(recallSlot(lastChat())).not.toContain(`[chat:${first.id}#`);

    // Never another user's chats.
    const stranger = await server.guest();
    const strangerKit = memoryKit(server.app, stranger.token);
    const theirs = await strangerKit.createThread();
    await strangerKit.send(theirs.id, 'What is my passport number?');
    expect(everything(lastChat())).not.toContain(PASSPORT);

    // A thread set to recall from itself only gets nothing from the others.
    const own = await kit.createThread('Private');
    const patched = await server.app.api(`/api/threads/${own.id}/settings`, {
      method: 'PATCH',
      token: server.token,
      json: { recallScope: 'thread' },
    });
    expect(patched.status).toBe(200);
    const settings = (await patched.json()) as ThreadMemorySettingsDto;
    expect(settings.recallScope).toBe('thread');
    expect(settings.defaults.recallScope).toBe('user');
    await kit.send(own.id, 'What is my passport number?');
    expect(everything(lastChat())).not.toContain(PASSPORT);

    // A forgotten message stops reaching any thread (the fork's copies of it included).
    const forgot = await server.app.api(`/api/threads/${first.id}/messages/${said.userMessage.id}`, {
      method: 'DELETE',
      token: server.token,
    });
    expect(forgot.status).toBe(200);
    const later = await kit.createThread('After the forget');
    await kit.send(later.id, 'What is my passport number?');
    expect(everything(lastChat())).not.toContain(PASSPORT);
  });

  it("search_transcript searches the other chats too (cited by chat), unless the chat's scope is its own", async () => {
    const { token } = await server.guest();
    const own = memoryKit(server.app, token);
    const first = await own.createThread('Garden');
    await own.send(first.id, 'The greenhouse key is hidden under the blue pot GREEN-5521.');
    const second = await own.createThread('Later');
    const searched = await own.send(second.id, 'Search: greenhouse key');
    const result = searched.messages.find((message) => message.role === 'tool');
    expect(result?.content).toContain(`[chat:${first.id}#1] chat "Garden" · user`);
    expect(result?.content).toContain('GREEN-5521');

    // The tool's description says which chats it searches: the scope of the thread of the latest call (they run one
    // after the other here).
    const lastDescription = () =>
      server.stub.requests.at(-1)?.body.tools?.find((tool) => tool.function.name === 'search_transcript')?.function
        .description ?? '';
    expect(lastDescription()).toContain("and in the user's other chats");

    const scoped = await own.createThread('Scoped');
    expect(
      (
        await server.app.api(`/api/threads/${scoped.id}/settings`, {
          method: 'PATCH',
          token,
          json: { recallScope: 'thread' },
        })
      ).status,
    ).toBe(200);
    const alone = await own.send(scoped.id, 'Search: greenhouse key');
    expect(alone.messages.find((message) => message.role === 'tool')?.content).not.toContain('GREEN-5521');
    expect(lastDescription()).toContain('only this conversation');
    expect(lastDescription()).not.toContain("and in the user's other chats");
    // The next call's context counts the same tool list.
    const preview = (await (
      await server.app.api(`/api/threads/${scoped.id}/context`, { token })
    ).json()) as ContextPackDto;
    const again = (await (
      await server.app.api(`/api/threads/${second.id}/context`, { token })
    ).json()) as ContextPackDto;
    expect(preview.budget).not.toBe(again.budget);

    // Back to the deployment's scope: the same thread's next call describes the other chats again.
    expect(
      (
        await server.app.api(`/api/threads/${scoped.id}/settings`, {
          method: 'PATCH',
          token,
          json: { recallScope: null },
        })
      ).status,
    ).toBe(200);
    const reached = await own.send(scoped.id, 'Search: greenhouse key');
    expect(
      reached.messages.find((message) => message.role === 'tool' && message.content.includes('GREEN-5521')),
    ).toBeDefined();
    expect(lastDescription()).toContain("and in the user's other chats");
  });
});
