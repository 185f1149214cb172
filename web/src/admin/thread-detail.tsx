import { useCallback, useEffect, useState } from 'react';
import type { MessageContextDto, ModelCallListDto, ModelCallPointDto } from '../../../src/shared/api';
import { ApiError } from '../api/api-error';
import { requestJson } from '../api/request-json';
import { formatTokens, relativeTime } from '../common/format';
import { MarkdownText } from '../common/markdown-text';
import { navigate } from '../common/navigation';
import { WhatTheModelSaw } from '../common/what-the-model-saw';
import type { AdminThreadDetailDto, SummaryRevisionDto, SummaryRevisionListDto } from '../../../src/shared/admin-api';
import { SummaryPromptEditor } from './summary-prompt-editor';
import { TokensChart } from './tokens-chart';

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

/** The share of prompt tokens the provider served from its prompt cache, over the calls that reported it. */
export function cachedShare(calls: readonly ModelCallPointDto[]): { share: number; calls: number } | null {
  const reported = calls.filter(
    (call) => call.reportedCachedTokens !== null && call.promptTokensSource === 'provider' && call.promptTokens > 0,
  );
  const prompt = reported.reduce((sum, call) => sum + call.promptTokens, 0);
  if (prompt === 0) return null;
  return {
    share: reported.reduce((sum, call) => sum + (call.reportedCachedTokens ?? 0), 0) / prompt,
    calls: reported.length,
  };
}

function CachedShare({ calls }: { calls: readonly ModelCallPointDto[] }) {
  const cached = cachedShare(calls);
  if (!cached) return null;
  return (
    <p className="figures" data-testid="cached-share">
      Provider prompt cache: {Math.round(cached.share * 1000) / 10}% of the prompt tokens of {cached.calls} calls shown
    </p>
  );
}

/** The newest calls, newest first: figures, and "What the model saw" for each call that produced an answer. */
function CallTable({ calls, onSee }: { calls: ModelCallPointDto[]; onSee(call: ModelCallPointDto): void }) {
  const newestFirst = [...calls].reverse().slice(0, 50);
  if (newestFirst.length === 0) return null;
  return (
    <div className="table-wrap">
      <table className="data" aria-label="Model calls">
        <thead>
          <tr>
            <th scope="col">When</th>
            <th scope="col">Purpose</th>
            <th scope="col" className="number">
              Prompt tokens
            </th>
            <th scope="col" className="number">
              Cached
            </th>
            <th scope="col" className="number">
              Transcript
            </th>
            <th scope="col" />
          </tr>
        </thead>
        <tbody>
          {newestFirst.map((call) => (
            <tr key={call.id}>
              <td>{relativeTime(call.at)}</td>
              <td>{call.purpose}</td>
              <td className="number" title={`our estimate ${call.estimatedPromptTokens}`}>
                {formatTokens(call.promptTokens)}
                {call.promptTokensSource === 'estimate' ? ' (estimate)' : ''}
              </td>
              <td className="number">
                {call.reportedCachedTokens !== null ? formatTokens(call.reportedCachedTokens) : '—'}
              </td>
              <td className="number">{formatTokens(call.transcriptTokens)}</td>
              <td>
                {call.messageId ? (
                  <button type="button" className="control" onClick={() => onSee(call)}>
                    What the model saw
                  </button>
                ) : null}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** Fork lineage: where this thread was branched from, and its branches, each a link to its detail. */
function Lineage({ lineage }: { lineage: AdminThreadDetailDto['lineage'] }) {
  if (!lineage.parent && lineage.forks.length === 0) return null;
  const link = (threadId: string, title: string) => (
    <a
      href={`/admin/threads/${threadId}`}
      onClick={(event) => {
        event.preventDefault();
        navigate(`/admin/threads/${threadId}`);
      }}
    >
      {title}
    </a>
  );
  return (
    <div className="lineage" aria-label="Fork lineage">
      {lineage.parent ? (
        <p>
          Forked from {link(lineage.parent.threadId, lineage.parent.title)} at message #{lineage.parent.seq}
        </p>
      ) : null}
      {lineage.forks.length > 0 ? (
        <p>
          Forks:{' '}
          {lineage.forks.map((fork, index) => (
            <span key={fork.threadId}>
              {index > 0 ? ', ' : ''}
              {link(fork.threadId, fork.title)} (at #{fork.seq})
            </span>
          ))}
        </p>
      ) : null}
    </div>
  );
}

/** One thread for an admin: summary, revisions with diffs, actions, the pack preview and the tokens chart. */
export function ThreadDetail({ threadId }: { threadId: string }) {
  const [detail, setDetail] = useState<AdminThreadDetailDto | null>(null);
  const [revisions, setRevisions] = useState<SummaryRevisionDto[]>([]);
  const [calls, setCalls] = useState<ModelCallPointDto[]>([]);
  const [olderCalls, setOlderCalls] = useState<string | null>(null);
  const [seeing, setSeeing] = useState<ModelCallPointDto | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [editing, setEditing] = useState<string | null>(null);

  const load = useCallback(async () => {
    try {
      const [loadedDetail, loadedRevisions, loadedCalls] = await Promise.all([
        requestJson<AdminThreadDetailDto>(`/api/admin/threads/${threadId}`),
        requestJson<SummaryRevisionListDto>(`/api/admin/threads/${threadId}/summaries`),
        requestJson<ModelCallListDto>(`/api/admin/threads/${threadId}/model-calls`),
      ]);
      setDetail(loadedDetail);
      setRevisions(loadedRevisions.revisions);
      setCalls(loadedCalls.calls);
      setOlderCalls(loadedCalls.nextCursor);
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

  const loadOlderCalls = async (cursor: string) => {
    try {
      const page = await requestJson<ModelCallListDto>(
        `/api/admin/threads/${threadId}/model-calls?before=${encodeURIComponent(cursor)}`,
      );
      setCalls((current) => [...page.calls, ...current]);
      setOlderCalls(page.nextCursor);
    } catch (caught) {
      setError(ApiError.from(caught).message);
    }
  };
  const seenMessageId = seeing?.messageId ?? null;
  const loadSeen = useCallback(
    () => requestJson<MessageContextDto>(`/api/admin/threads/${threadId}/messages/${seenMessageId}/context`),
    [threadId, seenMessageId],
  );

  const context = detail?.context ?? null;
  const pack = detail?.pack ?? null;
  return (
    <>
      <section className="card" aria-labelledby="thread-heading">
        <h2 id="thread-heading">{detail?.thread.title ?? 'Thread'}</h2>
        {error ? (
          <p className="error-text" role="alert">
            {error}
          </p>
        ) : null}
        {notice ? (
          <p role="status">
            <span className="tag ok">{notice}</span>
          </p>
        ) : null}
        {detail ? (
          <p className="figures">
            Owner {detail.thread.ownerId ?? '—'} · {detail.transcript.messages} messages,{' '}
            {formatTokens(detail.transcript.tokens)} transcript tokens
            {pack ? ` · next pack ${formatTokens(pack.tokens)} of ${formatTokens(pack.budget)} tokens` : ''}
          </p>
        ) : null}
        {detail ? <Lineage lineage={detail.lineage} /> : null}
        <div className="actions">
          <button
            type="button"
            onClick={() =>
              void act('Fold queued.', () =>
                requestJson(`/api/admin/threads/${threadId}/summarize`, { method: 'POST', json: {} }),
              )
            }
          >
            Fold now
          </button>
          <button
            type="button"
            onClick={() =>
              void act('Rebuild queued.', () =>
                requestJson(`/api/admin/threads/${threadId}/rebuild-summary`, { method: 'POST', json: {} }),
              )
            }
          >
            Rebuild from transcript
          </button>
          <button
            type="button"
            onClick={() => setEditing(context?.summaryText ?? '')}
            disabled={editing !== null || !context}
          >
            Edit summary
          </button>
          <button type="button" onClick={() => void load()}>
            Refresh
          </button>
        </div>
      </section>
      {editing !== null ? (
        <section className="card summary-editor" aria-labelledby="editor-heading">
          <h2 id="editor-heading">Edit summary</h2>
          <p className="muted">Saved as a new revision authored by you; later folds build on it.</p>
          <textarea aria-label="Summary text" value={editing} onChange={(event) => setEditing(event.target.value)} />
          <div className="actions">
            <button
              type="button"
              className="primary"
              disabled={!editing.trim()}
              onClick={() =>
                void act('Summary saved.', async () => {
                  await requestJson(`/api/admin/threads/${threadId}/summary`, {
                    method: 'PUT',
                    json: { text: editing },
                  });
                  setEditing(null);
                })
              }
            >
              Save summary
            </button>
            <button type="button" onClick={() => setEditing(null)}>
              Cancel
            </button>
          </div>
        </section>
      ) : null}
      {detail ? (
        <SummaryPromptEditor
          threadId={threadId}
          current={detail.thread.settings.summaryPrompt}
          onSaved={() => void load()}
        />
      ) : null}
      <div className="detail-grid">
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
        <section className="card" aria-labelledby="chart-heading">
          <h2 id="chart-heading">Tokens per model call</h2>
          <TokensChart calls={calls} />
          <CachedShare calls={calls} />
          {olderCalls ? (
            <button type="button" onClick={() => void loadOlderCalls(olderCalls)}>
              Older calls
            </button>
          ) : null}
          <CallTable calls={calls} onSee={setSeeing} />
          {seeing?.messageId ? (
            <WhatTheModelSaw
              label={`the call of ${relativeTime(seeing.at)}`}
              load={loadSeen}
              onClose={() => setSeeing(null)}
            />
          ) : null}
          <h2>Pack preview</h2>
          {pack ? (
            <div className="pack-entries table-wrap">
              <table className="data">
                <thead>
                  <tr>
                    <th scope="col">#</th>
                    <th scope="col">Role</th>
                    <th scope="col">Content</th>
                    <th scope="col" className="number">
                      Tokens
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {pack.messages.map((entry, index) => (
                    <tr key={index}>
                      <td>{entry.seq ?? '—'}</td>
                      <td>{entry.systemPrompt ? 'system prompt' : entry.role}</td>
                      <td className="preview" title={entry.content}>
                        {entry.content}
                      </td>
                      <td className="number">{entry.tokens}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          ) : (
            <p className="muted">Loading…</p>
          )}
        </section>
      </div>
    </>
  );
}
