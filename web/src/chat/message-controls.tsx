import { useCallback, useState } from 'react';
import type { ForkSummaryDto, MessageContextDto, MessageDto, ToolRunDto } from '../../../src/shared/api';
import { WhatTheModelSaw } from '../common/what-the-model-saw';
import { ActionIcon, type ActionIconName } from './action-icon';

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
export function MessageControls(props: BubbleProps & { onStartEdit?: (() => void) | undefined }) {
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
