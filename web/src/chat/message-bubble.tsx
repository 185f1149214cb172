import { useCallback, useState, type ReactNode } from 'react';
import type { ForkSummaryDto, MessageContextDto, MessageDto, ToolRunDto } from '../../../src/shared/api';
import { MarkdownText } from '../common/markdown-text';
import { WhatTheModelSaw } from '../common/what-the-model-saw';
import { ActionIcon, type ActionIconName } from './action-icon';
import { ToolCard, toolCardId } from './tool-card';

export interface BubbleProps {
  message: MessageDto;
  /** Tool results of this thread by tool call id. */
  results: Map<string, MessageDto>;
  /** Async run results (system notes) by run id. */
  notes: Map<string, MessageDto>;
  /** Runs whose results this answer follows up on. */
  followUpTo: ToolRunDto[];
  toolRuns: Record<string, ToolRunDto>;
  answering: boolean;
  onRetry(message: MessageDto): void;
  onCancelTool(runId: string): void;
  /** Memory controls; absent on messages that cannot take them. */
  onPin(message: MessageDto, pinned: boolean): void;
  onForget(message: MessageDto, options: { only: boolean }): void;
  /** Set on the thread's last answer only. */
  onRegenerate?: (() => void) | undefined;
  /** Loads what the model was given for an answer ("What the model saw"). */
  loadSeen(messageId: string): Promise<MessageContextDto>;
  /** The message a search hit opened: marked until another is chosen. */
  highlighted?: boolean;
  /** Branches: a new thread from the start through this message ("Branch from here"). */
  onBranch?: ((message: MessageDto) => void) | undefined;
  /** Edits a user message: a branch just before it answers the new text. */
  onEdit?: ((message: MessageDto, content: string) => void) | undefined;
  /** Threads branched from this thread at this message. */
  forks?: ForkSummaryDto[] | undefined;
  /** Opens another thread (a branch). */
  onOpenThread?: ((threadId: string) => void) | undefined;
}

const FINAL = new Set(['complete', 'error', 'cancelled']);

/** Delete asks which: a user message goes with its answer by default, or alone. */
function DeleteChoice(props: { message: MessageDto; onForget: BubbleProps['onForget']; onClose(): void }) {
  const { message } = props;
  const choose = (only: boolean) => {
    props.onClose();
    props.onForget(message, { only });
  };
  return (
    <div
      className="delete-choice"
      role="group"
      aria-label="Delete this message?"
      onKeyDown={(event) => {
        if (event.key === 'Escape') props.onClose();
      }}
    >
      {message.role === 'user' ? (
        <>
          <button type="button" className="danger" autoFocus onClick={() => choose(false)}>
            Delete with its answer
          </button>
          <button type="button" className="danger" onClick={() => choose(true)}>
            Delete only this message
          </button>
        </>
      ) : (
        <button type="button" className="danger" autoFocus onClick={() => choose(false)}>
          Delete this answer
        </button>
      )}
      <button type="button" onClick={props.onClose}>
        Cancel
      </button>
    </div>
  );
}

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

/**
 * One icon button of the message actions. Its tooltip (shown on hover and keyboard focus, from `data-tooltip`) is the
 * visible label; its accessible name starts with that label and says which message (WCAG 2.5.3, label in name).
 */
function ActionButton(props: {
  icon: ActionIconName;
  tooltip: string;
  name: string;
  onClick(): void;
  pressed?: boolean;
  disabled?: boolean;
  expanded?: boolean;
}) {
  return (
    <button
      type="button"
      className="action"
      aria-label={props.name}
      data-tooltip={props.tooltip}
      onClick={props.onClick}
      disabled={props.disabled}
      {...(props.pressed !== undefined ? { 'aria-pressed': props.pressed } : {})}
      {...(props.expanded !== undefined ? { 'aria-expanded': props.expanded } : {})}
    >
      <ActionIcon name={props.icon} />
    </button>
  );
}

/**
 * What the model saw, Pin, Regenerate (the last answer), Edit (a user message), Branch from here and Delete: a finished,
 * stored, live message's actions, as a compact icon toolbar that shows on hover and keyboard focus (always on touch
 * screens and while a delete choice is open, see styles.css). Every button stays in the tab order.
 */
function MessageControls(props: BubbleProps & { onStartEdit?: (() => void) | undefined }) {
  const { message } = props;
  const [deleting, setDeleting] = useState(false);
  const [seeing, setSeeing] = useState(false);
  const { loadSeen } = props;
  const load = useCallback(() => loadSeen(message.id), [loadSeen, message.id]);
  if (message.seq === null || !FINAL.has(message.status) || message.superseded) return null;
  const label = message.role === 'user' ? 'message' : 'answer';
  const which = `${label} #${message.seq}`;
  // Every stored answer has its model call's manifest (only completed answers come from a finished call).
  const answered = message.role === 'assistant' && message.status === 'complete';
  return (
    <>
      <div className={`message-actions${deleting ? ' open' : ''}`} role="group" aria-label={`Actions on ${which}`}>
        {answered ? (
          <ActionButton
            icon="seen"
            tooltip="What the model saw"
            name={`What the model saw for ${which}`}
            onClick={() => setSeeing(true)}
          />
        ) : null}
        <ActionButton
          icon="pin"
          tooltip={message.pinned ? 'Unpin' : 'Pin'}
          name={`${message.pinned ? 'Unpin' : 'Pin'} ${which}`}
          pressed={message.pinned}
          onClick={() => props.onPin(message, !message.pinned)}
        />
        {props.onRegenerate ? (
          <ActionButton
            icon="regenerate"
            tooltip="Regenerate"
            name={`Regenerate ${which}`}
            disabled={props.answering}
            onClick={props.onRegenerate}
          />
        ) : null}
        {props.onStartEdit && message.role === 'user' ? (
          <ActionButton icon="edit" tooltip="Edit" name={`Edit ${which}`} onClick={props.onStartEdit} />
        ) : null}
        {props.onBranch ? (
          <ActionButton
            icon="branch"
            tooltip="Branch from here"
            name={`Branch from here at #${message.seq}`}
            onClick={() => props.onBranch?.(message)}
          />
        ) : null}
        {deleting ? (
          <DeleteChoice message={message} onForget={props.onForget} onClose={() => setDeleting(false)} />
        ) : (
          <ActionButton
            icon="delete"
            tooltip="Delete"
            name={`Delete ${which}`}
            expanded={false}
            onClick={() => setDeleting(true)}
          />
        )}
      </div>
      {seeing ? (
        <WhatTheModelSaw label={`answer #${message.seq}`} load={load} onClose={() => setSeeing(false)} />
      ) : null}
    </>
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
