import { describe, expect, it } from 'vitest';
import { RECALL_HEADING } from '../../src/core/context';
import { wireContentText } from '../../src/llm/count-chat-tokens';
import { useChatServer } from '../support/chat-server';
import type { StubRequest } from '../support/openai-stub';
import { classifyRequest, summaryResponder } from '../support/summary-stub';
import { memoryKit, query } from '../memory/memory-test-kit';

const PLANTED = 'PLANT-4471';
const texts = (request: StubRequest | undefined) =>
  (request?.body.messages ?? []).map((message) => `${message.role}:${wireContentText(message.content)}`);

describe('sticky recall (RECALL_STICKY=on): a recall slot stays where it was shown until the next fold', () => {
  // The summarizer keeps CODE-n identifiers only: the planted code is dropped by the fold, so only recall brings it back.
  const server = useChatServer({
    stub: { classifyRequest, responder: summaryResponder() },
    env: { SUMMARY_TRIGGER: 'messages=8', SUMMARY_KEEP: 'messages=2', RECALL_STICKY: 'on' },
  });
  const kit = memoryKit(server);
  const chats = () => server.stub.requests.filter((request) => request.kind === 'chat');

  it('the next call finds the earlier slot in its prefix, recalls only what is new, and forgets with the transcript', async () => {
    const thread = await kit.createThread();
    const said = await kit.send(thread.id, `Please remember: the vault code is ${PLANTED}.`);
    await kit.send(thread.id, 'The greenhouse key is under the blue pot.');
    for (let turn = 1; turn <= 3; turn += 1)
      await kit.send(thread.id, `Filler turn ${turn} about gardening CODE-${1000 + turn}.`);
    await kit.waitForFoldThrough(thread.id, 4);

    await kit.send(thread.id, 'What was the vault code I gave you?');
    const first = chats().at(-1);
    expect(texts(first).filter((text) => text.includes(RECALL_HEADING))).toHaveLength(1);
    expect(texts(first).join('\n')).toContain(PLANTED);

    await kit.send(thread.id, 'Where is the greenhouse key again?');
    const second = chats().at(-1);
    // The whole earlier prompt is the start of this one: its recall slot stayed before the question it served.
    expect(texts(second).slice(0, texts(first).length)).toEqual(texts(first));
    const slots = texts(second).filter((text) => text.includes(RECALL_HEADING));
    expect(slots).toHaveLength(2);
    // The new slot shows only what the held one does not: each recalled message is in the pack once.
    expect(texts(second).join('\n').split('[#1 · user').length).toBe(2);
    expect(slots[1]).toContain('[#3 · user');
    expect(slots[1]).not.toContain('[#1 ·');
    expect(slots[1]).not.toContain('[#4 ·');
    const [note] = await query<{ note: { servedSeq: number; seqs: number[] } | null }>(
      server.app,
      `SELECT recall_note AS note FROM model_calls WHERE thread_id = $1 AND purpose = 'chat' ORDER BY created_at DESC LIMIT 1`,
      [thread.id],
    );
    expect(note?.note?.seqs).not.toContain(1);

    // Forgetting the recalled message takes it out of the held slot too.
    const forgot = await server.app.api(`/api/threads/${thread.id}/messages/${said.userMessage.id}`, {
      method: 'DELETE',
      token: server.token,
    });
    expect(forgot.status).toBe(200);
    await kit.send(thread.id, 'Anything else?');
    expect(texts(chats().at(-1)).join('\n')).not.toContain(PLANTED);
  });
});
