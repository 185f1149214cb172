import type { MessageDto, ToolRunDto } from '../../../src/shared/api';
import { MarkdownText } from '../common/markdown-text';
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
    <a className="follow-up" href={`#${toolCardId(run.toolCallId)}`} onClick={(event) => { event.preventDefault(); focusCard(); }}>
      ↳ Follow-up to the {run.name} result
    </a>
  );
}

/** One transcript message as a bubble: Markdown text, tool cards, streaming caret, error with retry. */
export function MessageBubble(props: BubbleProps) {
  const { message } = props;
  if (message.deleted) {
    return <article className="bubble deleted" aria-label={`${ROLE_LABEL[message.role]} message, deleted`}><em>Message deleted</em></article>;
  }
  const streaming = message.status === 'streaming' || message.status === 'pending';
  return (
    <article
      className={`bubble ${message.role}${streaming ? ' streaming' : ''}${message.status === 'error' ? ' failed' : ''}${props.followUpTo.length > 0 ? ' follow-up-answer' : ''}`}
      aria-label={`${ROLE_LABEL[message.role]} message`}
      aria-busy={streaming}
      data-seq={message.seq ?? undefined}
    >
      <header className="bubble-meta">
        <span className="role">{ROLE_LABEL[message.role]}</span>
        {message.seq !== null ? <span className="seq">#{message.seq}</span> : <span className="seq">queued</span>}
        {message.pinned ? <span className="pin" aria-label="pinned">📌</span> : null}
        {message.status === 'cancelled' ? <span className="tag">stopped</span> : null}
      </header>
      {props.followUpTo.map((run) => <FollowUpLink key={run.id} run={run} />)}
      {message.role === 'user' ? <p className="plain-text">{message.content}</p> : null}
      {message.role === 'system' || message.role === 'tool' ? <pre className="plain">{message.content}</pre> : null}
      {message.role === 'assistant' && message.content ? <MarkdownText text={message.content} /> : null}
      {streaming && !message.content && !message.toolCalls?.length ? <p className="thinking" aria-label="Assistant is writing">…</p> : null}
      {message.toolCalls?.map((call) => {
        const run = Object.values(props.toolRuns).find((candidate) => candidate.toolCallId === call.id) ?? null;
        const note = run ? props.notes.get(run.id) : undefined;
        const result = note && note.status === 'complete' ? note : props.results.get(call.id) ?? null;
        return <ToolCard key={call.id} call={call} run={run} result={result} answering={props.answering} onCancel={props.onCancelTool} />;
      })}
      {message.status === 'error' ? (
        <div className="message-error" role="alert">
          <span>{message.error?.message ?? 'The answer failed.'}</span>
          {message.role === 'assistant' ? <button type="button" onClick={() => props.onRetry(message)}>Retry</button> : null}
        </div>
      ) : null}
    </article>
  );
}
