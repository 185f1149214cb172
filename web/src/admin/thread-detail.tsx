import { useCallback, useEffect, useState } from 'react';
import type { ModelCallPointDto } from '../../../src/shared/api';
import { ApiError } from '../api/api-error';
import { requestJson } from '../api/request-json';
import { formatTokens, relativeTime } from '../common/format';
import { MarkdownText } from '../common/markdown-text';
import type { AdminThreadDetailDto, SummaryRevisionDto } from './admin-types';
import { lineDiff } from './line-diff';
import { TokensChart } from './tokens-chart';

function RevisionDiff({ before, after }: { before: string; after: string }) {
  return (
    <div className="diff" aria-label="Changes against the previous revision">
      {lineDiff(before, after).map((line, index) => (
        <span key={index} className={line.op}>{line.op === 'added' ? '+ ' : line.op === 'removed' ? '- ' : '  '}{line.text || ' '}</span>
      ))}
    </div>
  );
}

function RevisionTimeline({ revisions }: { revisions: SummaryRevisionDto[] }) {
  const newestFirst = [...revisions].reverse();
  return (
    <ol className="revisions" aria-label="Summary revisions">
      {newestFirst.map((revision, index) => {
        const previous = revisions.find((candidate) => candidate.revision === revision.revision - 1);
        return (
          <li key={revision.revision} className={index === 0 ? 'current' : ''}>
            <details open={index === 0}>
              <summary>
                Revision {revision.revision} · {revision.author}{revision.authorId ? ` (${revision.authorId})` : ''} · #{revision.fromSeq}–#{revision.throughSeq} · {formatTokens(revision.tokens)} tokens · {relativeTime(revision.createdAt)}
              </summary>
              <p className="figures">
                Model {revision.model ?? '—'} · in {revision.tokensIn ?? '—'} / out {revision.tokensOut ?? '—'} tokens · {revision.durationMs !== null ? `${(revision.durationMs / 1000).toFixed(1)} s` : '—'}
              </p>
              {revision.redacted ? <p className="muted">Redacted (it covered a forgotten message).</p> : <RevisionDiff before={previous?.text ?? ''} after={revision.text} />}
            </details>
          </li>
        );
      })}
    </ol>
  );
}

/** One thread for an admin: summary, revisions with diffs, actions, the pack preview and the tokens chart. */
export function ThreadDetail({ threadId }: { threadId: string }) {
  const [detail, setDetail] = useState<AdminThreadDetailDto | null>(null);
  const [revisions, setRevisions] = useState<SummaryRevisionDto[]>([]);
  const [calls, setCalls] = useState<ModelCallPointDto[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [editing, setEditing] = useState<string | null>(null);

  const load = useCallback(async () => {
    try {
      const [loadedDetail, loadedRevisions, loadedCalls] = await Promise.all([
        requestJson<AdminThreadDetailDto>(`/api/admin/threads/${threadId}`),
        requestJson<{ revisions: SummaryRevisionDto[] }>(`/api/admin/threads/${threadId}/summaries`),
        requestJson<{ calls: ModelCallPointDto[] }>(`/api/admin/threads/${threadId}/model-calls`),
      ]);
      setDetail(loadedDetail);
      setRevisions(loadedRevisions.revisions);
      setCalls(loadedCalls.calls);
      setError(null);
    } catch (caught) {
      setError(ApiError.from(caught).message);
    }
  }, [threadId]);

  useEffect(() => {
    void load();
  }, [load]);

  const act = async (label: string, run: () => Promise<unknown>) => {
    setNotice(null);
    try {
      await run();
      setNotice(label);
      await load();
    } catch (caught) {
      setError(ApiError.from(caught).message);
    }
  };

  const current = revisions.at(-1) ?? null;
  const pack = detail?.pack ?? null;
  return (
    <>
      <section className="card" aria-labelledby="thread-heading">
        <h2 id="thread-heading">{detail?.thread.title ?? 'Thread'}</h2>
        {error ? <p className="error-text" role="alert">{error}</p> : null}
        {notice ? <p className="tag ok" role="status">{notice}</p> : null}
        {detail ? (
          <p className="figures">
            Owner {detail.thread.ownerId ?? '—'} · {detail.transcript.messages} messages, {formatTokens(detail.transcript.tokens)} transcript tokens
            {pack ? ` · next pack ${formatTokens(pack.tokens)} of ${formatTokens(pack.budget)} tokens` : ''}
          </p>
        ) : null}
        <div className="actions">
          <button type="button" onClick={() => void act('Fold queued.', () => requestJson(`/api/admin/threads/${threadId}/summarize`, { method: 'POST', json: {} }))}>Fold now</button>
          <button type="button" onClick={() => void act('Rebuild queued.', () => requestJson(`/api/admin/threads/${threadId}/rebuild-summary`, { method: 'POST', json: {} }))}>Rebuild from transcript</button>
          <button type="button" onClick={() => setEditing(current?.text ?? '')} disabled={editing !== null}>Edit summary</button>
          <button type="button" onClick={() => void load()}>Refresh</button>
        </div>
      </section>
      {editing !== null ? (
        <section className="card summary-editor" aria-labelledby="editor-heading">
          <h2 id="editor-heading">Edit summary</h2>
          <p className="muted">Saved as a new revision authored by you; later folds build on it.</p>
          <textarea aria-label="Summary text" value={editing} onChange={(event) => setEditing(event.target.value)} />
          <div className="actions">
            <button type="button" className="primary" disabled={!editing.trim()} onClick={() => void act('Summary saved.', async () => {
              await requestJson(`/api/admin/threads/${threadId}/summary`, { method: 'PUT', json: { text: editing } });
              setEditing(null);
            })}>Save summary</button>
            <button type="button" onClick={() => setEditing(null)}>Cancel</button>
          </div>
        </section>
      ) : null}
      <div className="detail-grid">
        <section className="card" aria-labelledby="current-heading">
          <h2 id="current-heading">Current summary</h2>
          {current ? (
            <>
              <p className="figures">Revision {current.revision} · covers #{current.fromSeq}–#{current.throughSeq} · {formatTokens(current.tokens)} tokens</p>
              <MarkdownText text={current.text} />
            </>
          ) : <p className="muted">No summary yet.</p>}
          <h2>Revision timeline</h2>
          {revisions.length > 0 ? <RevisionTimeline revisions={revisions} /> : <p className="muted">No revisions.</p>}
        </section>
        <section className="card" aria-labelledby="chart-heading">
          <h2 id="chart-heading">Tokens per model call</h2>
          <TokensChart calls={calls} />
          <h2>Pack preview</h2>
          {pack ? (
            <div className="pack-entries table-wrap">
              <table className="data">
                <thead><tr><th scope="col">#</th><th scope="col">Role</th><th scope="col">Content</th><th scope="col" className="number">Tokens</th></tr></thead>
                <tbody>
                  {pack.messages.map((entry, index) => (
                    <tr key={index}>
                      <td>{entry.seq ?? '—'}</td><td>{entry.role}</td><td className="preview" title={entry.content}>{entry.content}</td><td className="number">{entry.tokens}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          ) : <p className="muted">Loading…</p>}
        </section>
      </div>
    </>
  );
}
