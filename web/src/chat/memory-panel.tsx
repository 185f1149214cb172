import type { ContextPackDto, ThreadDetailDto } from '../../../src/shared/api';
import { MarkdownText } from '../common/markdown-text';
import { formatTokens, relativeTime } from '../common/format';

export interface MemoryData {
  pack: ContextPackDto;
  detail: ThreadDetailDto;
}

function snippet(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > 90 ? `${flat.slice(0, 90)}…` : flat || '(no text)';
}

/** What the model will see next: summary, window entries, the pack against the budget, fold state. */
export function MemoryPanel(props: { data: MemoryData | null; error: string | null; onClose(): void }) {
  const { data } = props;
  return (
    <aside className="memory-panel" aria-label="Memory">
      <header className="panel-header">
        <h2>Memory</h2>
        <button type="button" className="icon" aria-label="Close memory panel" onClick={props.onClose}>✕</button>
      </header>
      {props.error ? <p className="error-text" role="alert">{props.error}</p> : null}
      {!data ? <p>Loading…</p> : <MemoryContent data={data} />}
    </aside>
  );
}

function MemoryContent({ data }: { data: MemoryData }) {
  const { pack, detail } = data;
  const fraction = pack.budget > 0 ? Math.min(1, pack.tokens / pack.budget) : 0;
  const windowEntries = pack.messages.filter((entry) => entry.seq !== undefined && pack.window.fromSeq !== null && entry.seq >= pack.window.fromSeq);
  const pinned = pack.messages.filter((entry) => entry.seq !== undefined && pack.pinnedSeqs.includes(entry.seq));
  const from = Math.max(1, detail.contextStartSeq);
  return (
    <div className="memory-content">
      <section aria-labelledby="pack-heading">
        <h3 id="pack-heading">Next model call</h3>
        <div className={`gauge${fraction > 0.9 ? ' high' : ''}`} role="meter" aria-label="Pack tokens against the budget" aria-valuemin={0} aria-valuemax={pack.budget} aria-valuenow={pack.tokens}>
          <span style={{ width: `${fraction * 100}%` }} />
        </div>
        <p className="figures">{formatTokens(pack.tokens)} of {formatTokens(pack.budget)} tokens{pack.omitted > 0 ? ` · ${pack.omitted} entries left out` : ''}</p>
        <p className="figures">
          {detail.context.foldPending ? <span className="tag warn">Fold pending</span> : <span className="tag ok">Summary up to date</span>}{' '}
          Window: {detail.context.windowEntries} entries, {formatTokens(detail.context.windowTokens)} tokens · last fold {relativeTime(detail.context.lastFoldAt)}
        </p>
        {detail.context.lastFoldError ? <p className="error-text">Last fold failed: {detail.context.lastFoldError}</p> : null}
      </section>
      <section aria-labelledby="summary-heading">
        <h3 id="summary-heading">Summary</h3>
        {pack.summary ? (
          <>
            <p className="figures">Revision {pack.summary.revision} · covers #{from}–#{pack.summary.coveredThroughSeq} · {formatTokens(pack.summary.tokens)} tokens</p>
            <div className="summary-text"><MarkdownText text={pack.summary.text} /></div>
          </>
        ) : <p className="muted">No summary yet: everything still fits in the window.</p>}
      </section>
      {pinned.length > 0 ? (
        <section aria-labelledby="pinned-heading">
          <h3 id="pinned-heading">Pinned</h3>
          <ul className="entries">{pinned.map((entry) => <li key={`p${entry.seq}`}><span className="seq">#{entry.seq}</span><span className="entry-text">{snippet(entry.content)}</span><span className="tokens">{entry.tokens} tok</span></li>)}</ul>
        </section>
      ) : null}
      <section aria-labelledby="window-heading">
        <h3 id="window-heading">Window {pack.window.fromSeq !== null ? `#${pack.window.fromSeq}–#${pack.window.throughSeq}` : ''}</h3>
        {windowEntries.length === 0 ? <p className="muted">Empty.</p> : (
          <ul className="entries" aria-label="Window entries">
            {windowEntries.map((entry) => (
              <li key={`w${entry.seq}-${entry.role}`}>
                <span className="seq">#{entry.seq}</span><span className="entry-text"><span className="role">{entry.role}</span> {snippet(entry.content)}</span><span className="tokens">{entry.tokens} tok</span>
              </li>
            ))}
          </ul>
        )}
      </section>
    </div>
  );
}
