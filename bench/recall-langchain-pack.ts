import { AIMessage, HumanMessage, SystemMessage, summarizationMiddleware, type BaseMessage } from 'langchain';
import { FakeListChatModel } from '@langchain/core/utils/testing';

/**
 * The messages LangChain.js' `summarizationMiddleware` keeps verbatim for the next model call on a conversation
 * (its default keep, `messages: 20`; the trigger given in tokens): the middleware's own `beforeModel` hook run on the
 * whole conversation plus the question. Its summary comes from a fake model (never verbatim text).
 * Type-checked on its own (bench/tsconfig.peer.json): langchain's types clash with the server's zod augmentation.
 */
export async function langchainKeptTexts(input: {
  systemPrompt: string;
  turns: { role: 'user' | 'assistant'; content: string }[];
  question: string;
  triggerTokens: number;
}): Promise<string[]> {
  const model = new FakeListChatModel({ responses: ['A summary of the conversation so far.'] });
  const middleware = summarizationMiddleware({ model, trigger: { tokens: input.triggerTokens } });
  const messages: BaseMessage[] = [
    new SystemMessage(input.systemPrompt),
    ...input.turns.map((turn) => (turn.role === 'user' ? new HumanMessage(turn.content) : new AIMessage(turn.content))),
    new HumanMessage(input.question),
  ];
  const hook = middleware.beforeModel as unknown as
    | ((
        state: { messages: BaseMessage[] },
        runtime: { context: Record<string, unknown> },
      ) => Promise<{ messages: BaseMessage[] } | undefined>)
    | {
        hook: (
          state: { messages: BaseMessage[] },
          runtime: { context: Record<string, unknown> },
        ) => Promise<{ messages: BaseMessage[] } | undefined>;
      };
  const run = typeof hook === 'function' ? hook : hook.hook;
  const update = await run({ messages }, { context: {} });
  const kept = update ? update.messages.slice(2) : messages.slice(1);
  return kept.map((message) =>
    typeof message.content === 'string' ? message.content : JSON.stringify(message.content),
  );
}
