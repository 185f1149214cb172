import { BudgetExplanation } from '../common/budget-explanation';
import type { ContextPackDto, MessageDto, ThreadDetailDto, ThreadDto } from '../../../src/shared/api';
import { MarkdownText } from '../common/markdown-text';
import { formatTokens, relativeTime } from '../common/format';
import { MemorySettingsForm } from './memory-settings-form';

export interface MemoryData {
  pack: ContextPackDto;
  detail: ThreadDetailDto;
  /** What auto-recall put in the latest answer's context (from its manifest); null before any answer. */
  recalled: { answerSeq: number; seqs: number[] } | null;
}

function snippet(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > 90 ? `${flat.slice(0, 90)}…` : flat || '(no text)';
}

export interface MemoryPanelProps {
  data: MemoryData | null;
  error: string | null;
  /** The live thread (settings, rebuilding state) and the caller's token, for the settings form. */
  thread: ThreadDto | null;
  token: string | null;
  /** Loaded transcript messages by seq: a pinned entry of one gets an Unpin button. */
  messageAt(seq: number): MessageDto | undefined;
  onUnpin(message: MessageDto): void;
  /** Scrolls the transcript to these seqs (citations, pinned entries). */
  onShow(range: { from: number; through: number }): void;
  /** Opens another chat at a message (what cross-thread recall brought from it). */
  onOpenElsewhere(at: { threadId: string; seq: number }): void;
  onClose(): void;
  /** A new chat before its first message: there is no memory to show yet. */
  draft?: boolean;
}

/** What the model will see next: summary, pinned messages, window entries, the pack against the budget, fold state, settings. */
export function MemoryPanel(props: MemoryPanelProps) {
  const { data } = props;
  return (
    <aside className="memory-panel" aria-label="Memory">
      <header className="panel-header">
        <h2>Memory</h2>
        <button type="button" className="icon" aria-label="Close memory panel" onClick={props.onClose}>
          ✕
        </button>
      </header>
      {props.error ? (
        <p className="error-text" role="alert">
          {props.error}
        </p>
      ) : null}
      {props.thread?.memoryRebuilding ? (
        <p className="rebuilding" role="status">
          <span className="tag warn">Memory is being rebuilt</span> A deleted message was in the summary; it is rebuilt
          from the remaining transcript.
        </p>
      ) : null}
      {props.draft ? (
        <p className="empty-thread">A new chat has no memory yet: it starts with your first message.</p>
      ) : !data ? (
        <p>Loading…</p>
      ) : (
        <MemoryContent {...props} data={data} />
      )}
      {props.thread ? (
        <section aria-labelledby="settings-heading">
          <h3 id="settings-heading">Settings</h3>
          <MemorySettingsForm threadId={props.thread.id} token={props.token} thread={props.thread} />
        </section>
      ) : null}
    </aside>
  );
}

type ContentProps = MemoryPanelProps & { data: MemoryData };
type PackEntry = MemoryData['pack']['messages'][number];

/** The next model call: the pack against the budget, why, the fold state, what recall brought. */
function PackSection(props: ContentProps) {
  const { pack, detail } = props.data;
  const fraction = pack.budget > 0 ? Math.min(1, pack.tokens / pack.budget) : 0;
  return (
    <section aria-labelledby="pack-heading">
      <h3 id="pack-heading">Next model call</h3>
      <div
        className={`gauge${fraction > 0.9 ? ' high' : ''}`}
        role="meter"
        aria-label="Pack tokens against the budget"
        aria-valuemin={0}
        aria-valuemax={pack.budget}
        aria-valuenow={pack.tokens}
      >
        <span style={{ width: `${fraction * 100}%` }} />
      </div>
      <p className="figures">
        {formatTokens(pack.tokens)} of {formatTokens(pack.budget)} tokens
        {pack.omitted > 0 ? ` · ${pack.omitted} entries left out` : ''}
      </p>
      <BudgetExplanation explanation={pack.explanation} packTokens={pack.tokens} packBudget={pack.budget} />
      <p className="figures">
        {detail.context.foldPending ? (
          <span className="tag warn">Fold pending</span>
        ) : (
          <span className="tag ok">Summary up to date</span>
        )}{' '}
        Window: {detail.context.windowEntries} entries, {formatTokens(detail.context.windowTokens)} tokens · last fold{' '}
        {relativeTime(detail.context.lastFoldAt)}
      </p>
      {props.data.recalled ? <RecalledLine recalled={props.data.recalled} onShow={props.onShow} /> : null}
      {pack.recalledElsewhere.length > 0 ? (
        <ElsewhereLine recalled={pack.recalledElsewhere} onOpen={props.onOpenElsewhere} />
      ) : null}
      {detail.context.lastFoldError ? (
        <p className="error-text">Last fold failed: {detail.context.lastFoldError.message}</p>
      ) : null}
    </section>
  );
}

function SummarySection(props: ContentProps) {
  const { pack, detail } = props.data;
  const from = Math.max(1, detail.contextStartSeq);
  return (
    <section aria-labelledby="summary-heading">
      <h3 id="summary-heading">Summary</h3>
      {pack.summary ? (
        <>
          <p className="figures">
            Revision {pack.summary.revision} · covers #{from}–#{pack.summary.coveredThroughSeq} ·{' '}
            {formatTokens(pack.summary.tokens)} tokens
          </p>
          <div className="summary-text">
            <MarkdownText text={pack.summary.text} onCite={props.onShow} />
          </div>
        </>
      ) : (
        <p className="muted">
          {detail.memoryMode === 'window-only'
            ? 'No summary: this thread keeps window-only memory.'
            : 'No summary yet: everything still fits in the window.'}
        </p>
      )}
    </section>
  );
}

function PinnedEntry({ entry, ...props }: ContentProps & { entry: PackEntry }) {
  const message = entry.seq !== undefined ? props.messageAt(entry.seq) : undefined;
  return (
    <li>
      <a
        className="seq"
        href={`#seq-${entry.seq}`}
        aria-label={`#${entry.seq}: show the pinned message`}
        onClick={(event) => {
          event.preventDefault();
          props.onShow({ from: entry.seq!, through: entry.seq! });
        }}
      >
        #{entry.seq}
      </a>
      <span className="entry-text">{snippet(entry.content)}</span>
      <span className="tokens">{entry.tokens} tok</span>
      {message?.pinned && message.role !== 'tool' ? (
        <button
          type="button"
          className="link"
          aria-label={`Unpin #${entry.seq}`}
          onClick={() => props.onUnpin(message)}
        >
          Unpin
        </button>
      ) : null}
    </li>
  );
}

function PinnedSection(props: ContentProps) {
  const { pack } = props.data;
  const pinned = pack.messages.filter((entry) => entry.seq !== undefined && pack.pinnedSeqs.includes(entry.seq));
  return (
    <section aria-labelledby="pinned-heading">
      <h3 id="pinned-heading">Pinned</h3>
      {pinned.length === 0 ? (
        <p className="muted">Nothing pinned. Pin a message to keep it in every model call.</p>
      ) : (
        <ul className="entries" aria-label="Pinned messages">
          {pinned.map((entry) => (
            <PinnedEntry key={`p${entry.seq}-${entry.role}`} {...props} entry={entry} />
          ))}
        </ul>
      )}
    </section>
  );
}

function WindowSection({ pack }: { pack: MemoryData['pack'] }) {
  // In transcript order: a branch's pack may carry a later message (a pin, a follow-up) ahead of the window's start.
  const windowEntries = pack.messages
    .filter((entry) => entry.seq !== undefined && pack.window.fromSeq !== null && entry.seq >= pack.window.fromSeq)
    .sort((left, right) => (left.seq ?? 0) - (right.seq ?? 0));
  return (
    <section aria-labelledby="window-heading">
      <h3 id="window-heading">
        Window {pack.window.fromSeq !== null ? `#${pack.window.fromSeq}–#${pack.window.throughSeq}` : ''}
      </h3>
      {windowEntries.length === 0 ? (
        <p className="muted">Empty.</p>
      ) : (
        <ul className="entries" aria-label="Window entries">
          {windowEntries.map((entry) => (
            <li key={`w${entry.seq}-${entry.role}`}>
              <span className="seq">#{entry.seq}</span>
              <span className="entry-text">
                <span className="role">{entry.role}</span> {snippet(entry.content)}
              </span>
              <span className="tokens">{entry.tokens} tok</span>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

function MemoryContent(props: ContentProps) {
  return (
    <div className="memory-content">
      <PackSection {...props} />
      <SummarySection {...props} />
      <PinnedSection {...props} />
      <WindowSection pack={props.data.pack} />
    </div>
  );
}

/** "Recalled: #12, #340": older messages auto-recall gave the model for the latest answer, linked like citations. */
function RecalledLine(props: { recalled: NonNullable<MemoryData['recalled']>; onShow: MemoryPanelProps['onShow'] }) {
  const { answerSeq, seqs } = props.recalled;
  return (
    <p
      className="figures recalled"
      data-testid="recalled"
      title={`Older messages auto-recall put in the model's context for the latest answer (#${answerSeq})`}
    >
      Recalled:{' '}
      {seqs.length === 0 ? (
        <span className="muted">nothing for answer #{answerSeq}</span>
      ) : (
        seqs.map((seq, index) => (
          <span key={seq}>
            {index > 0 ? ', ' : ''}
            <a
              className="citation"
              href={`#seq-${seq}`}
              aria-label={`#${seq}: show the recalled message`}
              onClick={(event) => {
                event.preventDefault();
                props.onShow({ from: seq, through: seq });
              }}
            >
              #{seq}
            </a>
          </span>
        ))
      )}
    </p>
  );
}

/** "From other chats: Travel papers #1, …": what cross-thread recall gives the next call, each linked to its chat. */
function ElsewhereLine(props: {
  recalled: ContextPackDto['recalledElsewhere'];
  onOpen: MemoryPanelProps['onOpenElsewhere'];
}) {
  return (
    <p
      className="figures recalled"
      data-testid="recalled-elsewhere"
      title="Messages of your other chats auto-recall puts in the next model call"
    >
      From other chats:{' '}
      {props.recalled.map((ref, index) => (
        <span key={`${ref.threadId}#${ref.seq}`}>
          {index > 0 ? ', ' : ''}
          <a
            className="citation"
            href={`/threads/${ref.threadId}`}
            aria-label={`Open ${ref.title ?? 'the chat'} at message #${ref.seq}`}
            onClick={(event) => {
              event.preventDefault();
              props.onOpen({ threadId: ref.threadId, seq: ref.seq });
            }}
          >
            {ref.title ?? 'a deleted chat'} #{ref.seq}
          </a>
        </span>
      ))}
    </p>
  );
}
