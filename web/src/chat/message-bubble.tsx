import { useState, type ReactNode } from 'react';
import type { ForkSummaryDto, MessageDto, ToolRunDto } from '../../../src/shared/api';
import { MarkdownText } from '../common/markdown-text';
import { MessageControls, type BubbleProps } from './message-controls';
import { ToolCard, toolCardId } from './tool-card';

export type { BubbleProps } from './message-controls';

/** The inline editor of a sent message: Enter sends the new text (in a branch), Shift+Enter a new line, Escape cancels. */
function InlineEditor(props: { message: MessageDto; onSend(content: string): void; onClose(): void }) {
  const [text, setText] = useState(props.message.content);
  const send = () => {
    if (text.trim().length === 0) return;
    props.onClose();
    props.onSend(text);
  };
  return (
    <form
      className="inline-editor"
      onSubmit={(event) => {
        event.preventDefault();
        send();
      }}
    >
      <textarea
        aria-label={`Edit message #${props.message.seq}`}
        autoFocus
        value={text}
        rows={Math.min(8, Math.max(2, text.split('\n').length))}
        onChange={(event) => setText(event.target.value)}
        onKeyDown={(event) => {
          if (event.key === 'Enter' && !event.shiftKey && !event.nativeEvent.isComposing) {
            event.preventDefault();
            send();
          }
          if (event.key === 'Escape') props.onClose();
        }}
      />
      <p className="hint">Sends the new text in a new branch; this conversation stays as it is.</p>
      <div className="inline-editor-actions">
        <button type="submit" disabled={text.trim().length === 0}>
          Send edit
        </button>
        <button type="button" onClick={props.onClose}>
          Cancel
        </button>
      </div>
    </form>
  );
}

/** The branches made at a message: links to open them. */
function ForkLinks(props: { forks: ForkSummaryDto[]; onOpen(threadId: string): void }) {
  return (
    <nav className="fork-links" aria-label="Branches from here">
      <span>Branches from here:</span>
      {props.forks.map((fork) => (
        <a
          key={fork.threadId}
          href={`/threads/${fork.threadId}`}
          onClick={(event) => {
            event.preventDefault();
            props.onOpen(fork.threadId);
          }}
        >
          {fork.title}
        </a>
      ))}
    </nav>
  );
}

const ROLE_LABEL = { user: 'You', assistant: 'Assistant', tool: 'Tool', system: 'System' } as const;

function FollowUpLink({ run }: { run: ToolRunDto }) {
  // The card of the call that started the run.
  const focusCard = () => {
    const card = document.getElementById(toolCardId(run.toolCallId));
    card?.scrollIntoView({ block: 'center', behavior: 'smooth' });
    card?.querySelector('button')?.focus();
  };
  return (
    <a
      className="follow-up"
      href={`#${toolCardId(run.toolCallId)}`}
      onClick={(event) => {
        event.preventDefault();
        focusCard();
      }}
    >
      ↳ Follow-up to the {run.name} result
    </a>
  );
}

/** A forgotten message: a tombstone in its place (its branches still listed). */
function deletedBubble(message: MessageDto, forks: ReactNode) {
  return (
    <article
      className={`bubble deleted ${message.role}`}
      aria-label={`${ROLE_LABEL[message.role]} message, deleted`}
      data-seq={message.seq ?? undefined}
      tabIndex={-1}
    >
      <header className="bubble-meta">
        <span className="role">{ROLE_LABEL[message.role]}</span>
        {message.seq !== null ? <span className="seq">#{message.seq}</span> : null}
      </header>
      <em>Message deleted</em>
      {forks}
    </article>
  );
}

/** An answer replaced by a regenerated one: collapsed, still readable. */
function supersededBubble(message: MessageDto) {
  return (
    <article
      className="bubble assistant superseded"
      aria-label="Previous answer, replaced"
      data-seq={message.seq ?? undefined}
      tabIndex={-1}
    >
      <details>
        <summary>
          <span className="role">Previous answer</span> <span className="seq">#{message.seq}</span> · replaced by a
          regenerated one
        </summary>
        <MarkdownText text={message.content} />
      </details>
    </article>
  );
}

function BubbleHeader({ message, highlighted }: { message: MessageDto; highlighted: boolean | undefined }) {
  return (
    <header className="bubble-meta">
      <span className="role">{ROLE_LABEL[message.role]}</span>
      {message.seq !== null ? <span className="seq">#{message.seq}</span> : <span className="seq">queued</span>}
      {message.pinned ? (
        <span className="pin tag" aria-label="pinned">
          Pinned
        </span>
      ) : null}
      {highlighted ? <span className="tag hit-tag">Search match</span> : null}
      {message.status === 'cancelled' ? <span className="tag">stopped</span> : null}
    </header>
  );
}

/** The cards of the message's tool calls, each with its run and its result (an async run's note once complete). */
function ToolCalls(props: BubbleProps) {
  return props.message.toolCalls?.map((call) => {
    const run = Object.values(props.toolRuns).find((candidate) => candidate.toolCallId === call.id) ?? null;
    const note = run ? props.notes.get(run.id) : undefined;
    const result = note && note.status === 'complete' ? note : (props.results.get(call.id) ?? null);
    return (
      <ToolCard
        key={call.id}
        call={call}
        run={run}
        result={result}
        answering={props.answering}
        onCancel={props.onCancelTool}
      />
    );
  });
}

function MessageError({ message, onRetry }: { message: MessageDto; onRetry(message: MessageDto): void }) {
  return (
    <div className="message-error" role="alert">
      <span>{message.error?.message ?? 'The answer failed.'}</span>
      {message.role === 'assistant' ? (
        <button type="button" onClick={() => onRetry(message)}>
          Retry
        </button>
      ) : null}
    </div>
  );
}

function bubbleClass(props: BubbleProps, streaming: boolean): string {
  const { message } = props;
  return `bubble ${message.role}${streaming ? ' streaming' : ''}${message.status === 'error' ? ' failed' : ''}${props.followUpTo.length > 0 ? ' follow-up-answer' : ''}${props.highlighted ? ' search-hit' : ''}`;
}

/** One transcript message as a bubble: Markdown text, tool cards, streaming caret, error with retry. */
export function MessageBubble(props: BubbleProps) {
  const { message } = props;
  const [editing, setEditing] = useState(false);
  const forks =
    props.forks && props.forks.length > 0 && props.onOpenThread ? (
      <ForkLinks forks={props.forks} onOpen={props.onOpenThread} />
    ) : null;
  if (message.deleted) return deletedBubble(message, forks);
  if (message.superseded) return supersededBubble(message);
  const streaming = message.status === 'streaming' || message.status === 'pending';
  return (
    <article
      className={bubbleClass(props, streaming)}
      aria-label={`${ROLE_LABEL[message.role]} message`}
      aria-busy={streaming}
      data-seq={message.seq ?? undefined}
      tabIndex={-1}
    >
      <BubbleHeader message={message} highlighted={props.highlighted} />
      {props.followUpTo.map((run) => (
        <FollowUpLink key={run.id} run={run} />
      ))}
      {message.role === 'user' && editing && props.onEdit ? (
        <InlineEditor
          message={message}
          onSend={(content) => props.onEdit?.(message, content)}
          onClose={() => setEditing(false)}
        />
      ) : null}
      {message.role === 'user' && !editing ? <p className="plain-text">{message.content}</p> : null}
      {message.role === 'system' || message.role === 'tool' ? <pre className="plain">{message.content}</pre> : null}
      {message.role === 'assistant' && message.content ? <MarkdownText text={message.content} /> : null}
      {streaming && !message.content && !message.toolCalls?.length ? (
        <p className="thinking" aria-label="Assistant is writing">
          …
        </p>
      ) : null}
      <ToolCalls {...props} />
      {message.status === 'error' ? <MessageError message={message} onRetry={props.onRetry} /> : null}
      {editing ? null : <MessageControls {...props} onStartEdit={props.onEdit ? () => setEditing(true) : undefined} />}
      {forks}
    </article>
  );
}
