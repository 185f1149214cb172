import { useCallback, useEffect, useState } from 'react';
import type { ModelCallListDto, ModelCallPointDto } from '../../../src/shared/api';
import type { AdminThreadDetailDto, SummaryRevisionDto, SummaryRevisionListDto } from '../../../src/shared/admin-api';
import { ApiError } from '../api/api-error';
import { requestJson } from '../api/request-json';
import { formatTokens } from '../common/format';
import { navigate } from '../common/navigation';
import { CurrentSummaryCard } from './current-summary-card';
import { ModelCallsCard } from './model-calls-card';
import { SummaryPromptEditor } from './summary-prompt-editor';

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

/** The thread's figures, lineage and actions (fold, rebuild, edit the summary, refresh). */
function ThreadCard(props: {
  threadId: string;
  detail: AdminThreadDetailDto | null;
  error: string | null;
  notice: string | null;
  act(label: string, run: () => Promise<unknown>): Promise<void>;
  editing: string | null;
  setEditing(text: string | null): void;
  load(): Promise<void>;
}) {
  const { threadId, detail, error, notice, act, editing, setEditing, load } = props;
  const context = detail?.context ?? null;
  const pack = detail?.pack ?? null;
  return (
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
  );
}

/** Editing the summary: saved as a new revision by the admin. */
function SummaryEditorCard(props: {
  threadId: string;
  editing: string;
  setEditing(text: string | null): void;
  act(label: string, run: () => Promise<unknown>): Promise<void>;
}) {
  const { threadId, editing, setEditing, act } = props;
  return (
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
  );
}

/** The thread's detail, summary revisions and model calls (older calls page by page), reloaded by `load`. */
function useThreadDetailData(threadId: string) {
  const [detail, setDetail] = useState<AdminThreadDetailDto | null>(null);
  const [revisions, setRevisions] = useState<SummaryRevisionDto[]>([]);
  const [calls, setCalls] = useState<ModelCallPointDto[]>([]);
  const [olderCalls, setOlderCalls] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);

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
  return { detail, revisions, calls, olderCalls, error, setError, load, loadOlderCalls };
}

/** One thread for an admin: summary, revisions with diffs, actions, the pack preview and the tokens chart. */
export function ThreadDetail({ threadId }: { threadId: string }) {
  const data = useThreadDetailData(threadId);
  const { detail, load, setError } = data;
  const [notice, setNotice] = useState<string | null>(null);
  const [editing, setEditing] = useState<string | null>(null);

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

  return (
    <>
      <ThreadCard {...{ threadId, detail, notice, act, editing, setEditing, load }} error={data.error} />
      {editing !== null ? <SummaryEditorCard {...{ threadId, editing, setEditing, act }} /> : null}
      {detail ? (
        <SummaryPromptEditor
          threadId={threadId}
          current={detail.thread.settings.summaryPrompt}
          onSaved={() => void load()}
        />
      ) : null}
      <div className="detail-grid">
        <CurrentSummaryCard context={detail?.context ?? null} revisions={data.revisions} />
        <ModelCallsCard
          threadId={threadId}
          calls={data.calls}
          olderCalls={data.olderCalls}
          onOlderCalls={(cursor) => void data.loadOlderCalls(cursor)}
          pack={detail?.pack ?? null}
        />
      </div>
    </>
  );
}
