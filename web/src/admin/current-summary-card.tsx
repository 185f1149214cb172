import type { AdminThreadDetailDto, SummaryRevisionDto } from '../../../src/shared/admin-api';
import { formatTokens, relativeTime } from '../common/format';
import { MarkdownText } from '../common/markdown-text';

const DIFF_MARK = { add: '+ ', remove: '- ', equal: '  ' } as const;

function RevisionDiff({ revision }: { revision: SummaryRevisionDto }) {
  return (
    <div
      className="diff"
      aria-label={`Changes in revision ${revision.revision}: ${revision.diffStats.added} lines added, ${revision.diffStats.removed} removed`}
    >
      {revision.diff.map((line, index) => (
        <span key={index} className={line.op}>
          {DIFF_MARK[line.op]}
          {line.text || ' '}
        </span>
      ))}
    </div>
  );
}

function RevisionTimeline({ revisions }: { revisions: SummaryRevisionDto[] }) {
  const newestFirst = [...revisions].reverse();
  return (
    <ol className="revisions" aria-label="Summary revisions">
      {newestFirst.map((revision, index) => {
        return (
          <li key={revision.revision} className={index === 0 ? 'current' : ''}>
            <details open={index === 0}>
              <summary>
                Revision {revision.revision} · {revision.author}
                {revision.authorId ? ` (${revision.authorId})` : ''} · #{revision.fromSeq}–#{revision.throughSeq} ·{' '}
                {formatTokens(revision.tokens)} tokens · {relativeTime(revision.createdAt)}
              </summary>
              <p className="figures">
                Model {revision.model ?? '—'} · in {revision.tokensIn ?? '—'} / out {revision.tokensOut ?? '—'} tokens ·{' '}
                {revision.durationMs !== null ? `${(revision.durationMs / 1000).toFixed(1)} s` : '—'}
              </p>
              {revision.redacted ? (
                <p className="muted">Redacted (it covered a forgotten message).</p>
              ) : (
                <RevisionDiff revision={revision} />
              )}
            </details>
          </li>
        );
      })}
    </ol>
  );
}

/** The thread's current summary, its fold state, and the timeline of its revisions with their diffs. */
export function CurrentSummaryCard(props: {
  context: AdminThreadDetailDto['context'] | null;
  revisions: SummaryRevisionDto[];
}) {
  const { context, revisions } = props;
  return (
    <section className="card" aria-labelledby="current-heading">
      <h2 id="current-heading">Current summary</h2>
      {context && context.revision > 0 ? (
        <>
          <p className="figures">
            Revision {context.revision} · covers through #{context.coveredThroughSeq} ·{' '}
            {formatTokens(context.summaryTokens)} tokens
          </p>
          <div className="summary-text">
            <MarkdownText text={context.summaryText} />
          </div>
        </>
      ) : (
        <p className="muted">No summary yet.</p>
      )}
      {context ? (
        <p className="figures">
          {context.foldPending ? (
            <span className="tag warn">Fold pending</span>
          ) : (
            <span className="tag ok">No fold pending</span>
          )}{' '}
          Window {context.windowEntries} entries, {formatTokens(context.windowTokens)} tokens · last fold{' '}
          {relativeTime(context.lastFoldAt)}
          {context.foldReasons.length > 0 ? ` · ${context.foldReasons.join('; ')}` : ''}
        </p>
      ) : null}
      {context?.lastFoldError ? <p className="error-text">Last fold failed: {context.lastFoldError}</p> : null}
      <h2>Revision timeline</h2>
      {revisions.length > 0 ? <RevisionTimeline revisions={revisions} /> : <p className="muted">No revisions.</p>}
    </section>
  );
}
