import { useEffect, useRef, useState } from 'react';
import type { MessageContextDto } from '../../../src/shared/api';
import { ApiError } from '../api/api-error';
import { budgetSentence, exactTokens } from './budget-explanation';
import { formatTokens } from './format';
import { navigate } from './navigation';

const PART_LABELS = [
  ['systemPrefix', 'System prompt'],
  ['savedMemories', 'Saved memories'],
  ['summary', 'Summary'],
  ['pinned', 'Pinned'],
  ['window', 'Window'],
  ['recall', 'Recalled'],
  ['notes', 'Notes'],
  ['toolSchemas', 'Tool definitions'],
  ['priming', 'Reply priming'],
] as const;

/** The prompt by our estimate: every part, tool definitions included. */
function partsTotal(parts: NonNullable<MessageContextDto['parts']>): number {
  return PART_LABELS.reduce((sum, [key]) => sum + (parts[key] ?? 0), 0);
}

function seqList(seqs: number[]): string {
  return seqs.length > 0
    ? [...seqs]
        .sort((left, right) => left - right)
        .map((seq) => `#${seq}`)
        .join(', ')
    : 'none';
}

function Figures({ seen }: { seen: MessageContextDto }) {
  return (
    <p className="figures">
      Model {seen.model} · our estimate {formatTokens(seen.estimatedPromptTokens)} prompt tokens · provider reported{' '}
      {seen.reportedPromptTokens !== null ? formatTokens(seen.reportedPromptTokens) : 'nothing'}
      {seen.reportedCachedTokens !== null
        ? ` · ${formatTokens(seen.reportedCachedTokens)} read from the provider's prompt cache`
        : ''}
      {seen.reportedCacheWriteTokens !== null ? ` · ${formatTokens(seen.reportedCacheWriteTokens)} written to it` : ''}
      {seen.omitted > 0 ? ` · ${seen.omitted} older window entries left out` : ''}
      {seen.overflowRetry ? ' · sent again after the provider reported an overflow' : ''}
    </p>
  );
}

/** Where this call's prompt first differed from the previous call's in the thread: what a prompt cache could not reuse. */
function Divergence({ seen }: { seen: MessageContextDto }) {
  const divergence = seen.promptDivergence;
  if (!divergence) return null;
  const where =
    divergence.messageIndex < 0
      ? 'in the tool definitions (sent before every message)'
      : `at message ${divergence.messageIndex + 1} of the prompt, after ${formatTokens(divergence.tokensBefore)} tokens`;
  return (
    <p className="figures" data-testid="seen-prompt-divergence">
      First difference from the previous call's prompt: {where}
    </p>
  );
}

/** The system prompt: its text for admins; for a thread owner (text null) only its size and hash. */
function SystemPrompt({ prefix }: { prefix: MessageContextDto['systemPrefix'] }) {
  if (!prefix) return <p className="muted">Not recorded.</p>;
  if (prefix.text === null) {
    return (
      <p className="muted" data-testid="seen-system-prompt-hidden">
        System prompt (hidden): {formatTokens(prefix.tokens)} tokens, hash {prefix.hash.slice(0, 12)}…
      </p>
    );
  }
  return (
    <pre className="plain" title={`sha256 ${prefix.hash}`}>
      {prefix.text}
    </pre>
  );
}

/** The prompt's size by part, against the budget. */
function PartsTable({ seen, parts }: { seen: MessageContextDto; parts: NonNullable<MessageContextDto['parts']> }) {
  return (
    <>
      <p className="figures" data-testid="seen-budget">
        {budgetSentence(seen.limits)} This call: tool definitions {exactTokens(parts.toolSchemas)} + the pack{' '}
        {exactTokens(partsTotal(parts) - parts.toolSchemas)} = {exactTokens(partsTotal(parts))} prompt tokens by our
        estimate.
      </p>
      <table className="data" aria-label="Tokens per part">
        <tbody>
          {PART_LABELS.map(([key, label]) => (
            <tr key={key}>
              <th scope="row">{label}</th>
              <td className="number">{formatTokens(parts[key] ?? 0)}</td>
            </tr>
          ))}
          <tr>
            <th scope="row">Total</th>
            <td className="number">{formatTokens(partsTotal(parts))}</td>
          </tr>
        </tbody>
      </table>
    </>
  );
}

function SavedMemoriesSeen({ items }: { items: MessageContextDto['savedMemories'] }) {
  if (items.length === 0) return null;
  return (
    <>
      <h3>Saved memories</h3>
      <ul className="seen-saved-memories" data-testid="seen-saved-memories">
        {items.map((item) => (
          <li key={item.id}>{item.text ?? <span className="muted">Deleted since.</span>}</li>
        ))}
      </ul>
    </>
  );
}

function SummarySeen({ summary }: { summary: MessageContextDto['summary'] }) {
  if (!summary) return <p className="muted">No summary: the model saw the messages only.</p>;
  return (
    <>
      <p className="figures" data-testid="seen-summary-revision">
        Summary revision {summary.revision} · covers #{summary.fromSeq}–#{summary.throughSeq} ·{' '}
        {formatTokens(summary.tokens)} tokens
      </p>
      {summary.redacted ? (
        <p className="muted">Redacted: it covered a message deleted since.</p>
      ) : (
        <pre className="plain">{summary.text}</pre>
      )}
    </>
  );
}

/** What auto-recall brought from the user's other chats, each a link to that chat. */
function RecalledElsewhere({ refs }: { refs: MessageContextDto['recalledElsewhere'] }) {
  return (
    <p className="figures" data-testid="seen-recalled-elsewhere">
      From other chats:{' '}
      {refs.map((ref, index) => (
        <span key={`${ref.threadId}#${ref.seq}`}>
          {index > 0 ? ', ' : ''}
          <a
            href={`/threads/${ref.threadId}`}
            onClick={(event) => {
              event.preventDefault();
              navigate(`/threads/${ref.threadId}`);
            }}
          >
            {ref.title ?? 'a deleted chat'} #{ref.seq}
          </a>
        </span>
      ))}
    </p>
  );
}

function MessagesSeen({ seen }: { seen: MessageContextDto }) {
  return (
    <>
      <p className="figures" data-testid="seen-window-seqs">
        Window {seqList(seen.windowSeqs)} · pinned {seqList(seen.pinnedSeqs)}
      </p>
      {seen.recalledSeqs.length > 0 ? <p className="figures">Recalled {seqList(seen.recalledSeqs)}</p> : null}
      {seen.recalledElsewhere.length > 0 ? <RecalledElsewhere refs={seen.recalledElsewhere} /> : null}
      <ol className="seen-messages">
        {seen.messages.map((message) => (
          <li key={`${message.place}-${message.seq}`} className={message.forgotten ? 'forgotten' : ''}>
            <span className="seq">#{message.seq}</span>{' '}
            <span className="role">
              {message.place === 'window' ? '' : `${message.place} `}
              {message.role}
            </span>{' '}
            {message.forgotten ? <em>Forgotten since</em> : <span className="preview">{message.content}</span>}
          </li>
        ))}
      </ol>
    </>
  );
}

function ToolResultsSeen({ results }: { results: MessageContextDto['toolResults'] }) {
  if (results.length === 0) return null;
  return (
    <>
      <h3>Tool results as they entered</h3>
      <ol className="seen-messages">
        {results.map((result) => (
          <li key={result.seq} className={result.forgotten ? 'forgotten' : ''}>
            <span className="seq">#{result.seq}</span>{' '}
            <span className="role">{result.role === 'tool' ? 'tool result' : 'background result'}</span> ·{' '}
            {formatTokens(result.tokens)} tokens
            {result.forgotten ? <em> Forgotten since</em> : <pre className="plain">{result.content}</pre>}
          </li>
        ))}
      </ol>
    </>
  );
}

/** The body of the view: what one model call was given, part by part. */
export function SeenContext({ seen }: { seen: MessageContextDto }) {
  return (
    <div className="seen-context">
      <Figures seen={seen} />
      <Divergence seen={seen} />
      {seen.parts ? <PartsTable seen={seen} parts={seen.parts} /> : null}
      <h3>System prompt</h3>
      <SystemPrompt prefix={seen.systemPrefix} />
      <SavedMemoriesSeen items={seen.savedMemories} />
      <h3>Summary</h3>
      <SummarySeen summary={seen.summary} />
      <h3>Messages</h3>
      <MessagesSeen seen={seen} />
      <ToolResultsSeen results={seen.toolResults} />
    </div>
  );
}

/** "What the model saw" for one answer: a modal dialog that loads the answer's call manifest when opened. */
export function WhatTheModelSaw(props: { label: string; load(): Promise<MessageContextDto>; onClose(): void }) {
  const dialog = useRef<HTMLDialogElement>(null);
  const [seen, setSeen] = useState<MessageContextDto | null>(null);
  const [error, setError] = useState<string | null>(null);
  const { load } = props;
  useEffect(() => {
    dialog.current?.showModal();
    let live = true;
    load().then(
      (loaded) => {
        if (live) setSeen(loaded);
      },
      (caught: unknown) => {
        if (live) setError(ApiError.from(caught).message);
      },
    );
    return () => {
      live = false;
    };
  }, [load]);
  return (
    <dialog
      ref={dialog}
      className="seen-dialog"
      aria-label={`What the model saw for ${props.label}`}
      onClose={props.onClose}
    >
      <header className="panel-header">
        <h2>What the model saw</h2>
        <button type="button" className="icon" aria-label="Close" onClick={() => dialog.current?.close()}>
          ✕
        </button>
      </header>
      {error ? (
        <p className="error-text" role="alert">
          {error}
        </p>
      ) : seen ? (
        <SeenContext seen={seen} />
      ) : (
        <p className="muted">Loading…</p>
      )}
    </dialog>
  );
}
