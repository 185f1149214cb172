import type { PackMessage, Result } from './types';

/** `openai`: system messages anywhere, tool exchanges; `strict`: strict chat templates (vLLM, Ollama). */
export type ChatTemplateCompat = 'openai' | 'strict';

function toolProblems(messages: readonly PackMessage[]): string[] {
  const problems: string[] = [];
  let open: { index: number; pending: Set<string> } | undefined;
  const closeExchange = (): void => {
    if (open && open.pending.size > 0) {
      problems.push(`message ${open.index}: tool calls ${[...open.pending].join(', ')} are not answered`);
    }
    open = undefined;
  };
  messages.forEach((message, index) => {
    if (message.role === 'tool') {
      if (!open) problems.push(`message ${index}: tool message does not follow an assistant message with tool calls`);
      else if (message.toolCallId === undefined || !open.pending.delete(message.toolCallId)) {
        problems.push(
          `message ${index}: tool message answers ${message.toolCallId ?? '(no id)'}, which the preceding ` +
            'assistant message did not call (or which is answered twice)',
        );
      }
      return;
    }
    closeExchange();
    if (message.role === 'assistant' && (message.toolCalls?.length ?? 0) > 0) {
      open = { index, pending: new Set(message.toolCalls?.map((call) => call.id)) };
    }
  });
  closeExchange();
  return problems;
}

function strictProblems(messages: readonly PackMessage[]): string[] {
  const problems: string[] = [];
  messages.forEach((message, index) => {
    if (message.role === 'system' && index > 0) problems.push(`message ${index}: system message after the first`);
    if (message.role === 'tool' || (message.toolCalls?.length ?? 0) > 0) {
      problems.push(`message ${index}: tool exchange in a strict pack`);
    }
    if (index > 0 && messages[index - 1]?.role === message.role) {
      problems.push(`messages ${index - 1} and ${index}: two consecutive ${message.role} messages`);
    }
  });
  return problems;
}

/** The cache-stable order: no system message but the leading one in front of the per-call parts. */
function cacheOrderProblems(messages: readonly PackMessage[], perCallFrom: number): string[] {
  const problems: string[] = [];
  messages.forEach((message, index) => {
    if (index > 0 && index < perCallFrom && message.role === 'system')
      problems.push(`message ${index}: system message before the per-call parts`);
  });
  return problems;
}

/**
 * Checks a pack's ordering: every tool message answers a call of the assistant message right before its run of
 * tool messages, and every call is answered exactly once. `strict` also requires no system message after the first,
 * no tool exchange and no two consecutive messages of one role. With `perCallFrom` (the manifest's), it also checks
 * the cache-stable order: the only system messages after the leading one are per-call parts (next to the newest
 * user message), never in front of the stable content.
 */
export function validatePackOrdering(
  messages: readonly PackMessage[],
  compat: ChatTemplateCompat = 'openai',
  options: { perCallFrom?: number } = {},
): Result<true> {
  const problems = [
    ...toolProblems(messages),
    ...(compat === 'strict' ? strictProblems(messages) : []),
    ...(options.perCallFrom !== undefined ? cacheOrderProblems(messages, options.perCallFrom) : []),
  ];
  return problems.length === 0 ? { ok: true, value: true } : { ok: false, error: problems.join('; ') };
}

/** Throws when validatePackOrdering finds a problem; for tests and adapters about to call a model. */
export function assertPackValid(messages: readonly PackMessage[], compat: ChatTemplateCompat = 'openai'): void {
  const result = validatePackOrdering(messages, compat);
  if (!result.ok) throw new Error(`Invalid context pack: ${result.error}`);
}
