import { useEffect, useState } from 'react';
import { ApiError } from '../api/api-error';
import { requestJson } from '../api/request-json';
import { formatTokens, plainPreview, relativeTime } from '../common/format';
import { navigate } from '../common/navigation';
import type { AdminThreadPageDto, AdminThreadSortDto as AdminThreadSort } from '../../../src/shared/admin-api';

const PAGE_SIZE = 25;
const SORTS: Array<{ value: AdminThreadSort; label: string }> = [
  { value: 'activity', label: 'Last activity' },
  { value: 'summary', label: 'Summary size' },
  { value: 'lag', label: 'Fold lag' },
  { value: 'errors', label: 'Fold errors' },
];

type AdminThreadRow = AdminThreadPageDto['threads'][number];

/** The search box (debounced) and the sort, which start the paging over. */
function useThreadQuery() {
  const [query, setQuery] = useState('');
  const [debounced, setDebounced] = useState('');
  const [sort, setSort] = useState<AdminThreadSort>('activity');
  useEffect(() => {
    const timer = window.setTimeout(() => setDebounced(query.trim()), 250);
    return () => window.clearTimeout(timer);
  }, [query]);
  return { query, setQuery, debounced, sort, setSort };
}

/** Keyset paging over the threads matching `query` in `sort` order; a stack of cursors for "previous". */
function useThreadPages(query: string, sort: AdminThreadSort) {
  const [cursors, setCursors] = useState<Array<string | null>>([null]);
  const [page, setPage] = useState<AdminThreadPageDto | null>(null);
  const [error, setError] = useState<string | null>(null);
  const cursor = cursors.at(-1) ?? null;
  useEffect(() => setCursors([null]), [query, sort]);
  useEffect(() => {
    const controller = new AbortController();
    const params = new URLSearchParams({ sort, limit: String(PAGE_SIZE) });
    if (query) params.set('query', query);
    if (cursor) params.set('cursor', cursor);
    requestJson<AdminThreadPageDto>(`/api/admin/threads?${params}`, { signal: controller.signal }).then(
      (result) => {
        setPage(result);
        setError(null);
      },
      (caught: unknown) => {
        if (!controller.signal.aborted) setError(ApiError.from(caught).message);
      },
    );
    return () => controller.abort();
  }, [query, sort, cursor]);
  return { cursors, setCursors, page, error };
}

function ThreadsHead() {
  return (
    <thead>
      <tr>
        <th scope="col">Thread</th>
        <th scope="col">Owner</th>
        <th scope="col" className="number">
          Messages
        </th>
        <th scope="col">Summary</th>
        <th scope="col" className="number">
          Summary tokens
        </th>
        <th scope="col" className="number">
          Window tokens
        </th>
        <th scope="col" className="number">
          Fold lag
        </th>
        <th scope="col">Last fold</th>
        <th scope="col">Activity</th>
      </tr>
    </thead>
  );
}

function ThreadRow({ thread }: { thread: AdminThreadRow }) {
  return (
    <tr>
      <td>
        <a
          href={`/admin/threads/${thread.id}`}
          onClick={(event) => {
            event.preventDefault();
            navigate(`/admin/threads/${thread.id}`);
          }}
        >
          {thread.title}
        </a>
      </td>
      <td className="preview owner" title={thread.owner.id}>
        {thread.owner.id}
      </td>
      <td className="number">{thread.messageCount}</td>
      <td className="preview" title={plainPreview(thread.summary.preview)}>
        {plainPreview(thread.summary.preview) || '—'}
      </td>
      <td className="number">{formatTokens(thread.summary.tokens)}</td>
      <td className="number">{formatTokens(thread.windowTokens)}</td>
      <td className="number">{thread.foldLagEntries}</td>
      <td>
        {thread.lastFoldError ? (
          <span className="error-text" title={thread.lastFoldError}>
            failed
          </span>
        ) : (
          relativeTime(thread.lastFoldAt)
        )}
      </td>
      <td>{relativeTime(thread.lastActivityAt)}</td>
    </tr>
  );
}

/** All users' threads: search, sort, keyset paging (a stack of cursors for "previous"). */
export function ThreadsTable() {
  const { query, setQuery, debounced, sort, setSort } = useThreadQuery();
  const { cursors, setCursors, page, error } = useThreadPages(debounced, sort);
  return (
    <section className="card" aria-labelledby="threads-heading">
      <div className="toolbar">
        <h2 id="threads-heading">Threads</h2>
        <input
          type="search"
          aria-label="Search threads by title, owner or id"
          placeholder="Search title, owner, id"
          value={query}
          onChange={(event) => setQuery(event.target.value)}
        />
        <label>
          Sort by{' '}
          <select value={sort} onChange={(event) => setSort(event.target.value as AdminThreadSort)}>
            {SORTS.map((option) => (
              <option key={option.value} value={option.value}>
                {option.label}
              </option>
            ))}
          </select>
        </label>
      </div>
      {error ? (
        <p className="error-text" role="alert">
          {error}
        </p>
      ) : null}
      <div className="table-wrap">
        <table className="data" aria-label="Threads">
          <ThreadsHead />
          <tbody>
            {page?.threads.map((thread) => (
              <ThreadRow key={thread.id} thread={thread} />
            ))}
            {page && page.threads.length === 0 ? (
              <tr>
                <td colSpan={9} className="muted">
                  No threads match.
                </td>
              </tr>
            ) : null}
          </tbody>
        </table>
      </div>
      <div className="toolbar">
        <button type="button" disabled={cursors.length <= 1} onClick={() => setCursors(cursors.slice(0, -1))}>
          Previous page
        </button>
        <span className="muted">Page {cursors.length}</span>
        <button
          type="button"
          disabled={!page?.nextCursor}
          onClick={() => page?.nextCursor && setCursors([...cursors, page.nextCursor])}
        >
          Next page
        </button>
      </div>
    </section>
  );
}
