import { useState, type ReactNode } from 'react';
import type { SearchHitDto, SearchPageDto } from '../../../src/shared/api';
import { ApiError } from '../api/api-error';
import { requestJson } from '../api/request-json';
import { relativeTime } from '../common/format';

type Scope = 'all' | 'thread';

interface Results {
  query: string;
  scope: Scope;
  /** The thread searched when `scope` is `thread`. */
  threadId: string | null;
  hits: SearchHitDto[];
  nextCursor: string | null;
}

const ROLE_LABEL = { user: 'You', assistant: 'Assistant', tool: 'Tool', system: 'System' } as const;

/** The snippet with its matched words in <mark>. */
function MarkedSnippet({ hit }: { hit: SearchHitDto }) {
  const parts: ReactNode[] = [];
  let at = 0;
  for (const { start, end } of hit.highlights) {
    if (start < at) continue;
    if (start > at) parts.push(hit.snippet.slice(at, start));
    parts.push(<mark key={start}>{hit.snippet.slice(start, end)}</mark>);
    at = end;
  }
  parts.push(hit.snippet.slice(at));
  return <span className="hit-snippet">{parts}</span>;
}

/** Hits grouped by thread, in the order their best hit ranks. */
function byThread(hits: SearchHitDto[]): { threadId: string; title: string; hits: SearchHitDto[] }[] {
  const groups = new Map<string, { threadId: string; title: string; hits: SearchHitDto[] }>();
  for (const hit of hits) {
    const group = groups.get(hit.threadId) ?? { threadId: hit.threadId, title: hit.threadTitle, hits: [] };
    group.hits.push(hit);
    groups.set(hit.threadId, group);
  }
  return [...groups.values()];
}

interface SearchRequest {
  query: string;
  scope: Scope;
  threadId: string | null;
  cursor?: string;
  previous?: SearchHitDto[];
}

/** The results of the last search (a page at a time: `load` with a cursor adds the next one), loading and error. */
function useSearchResults(token: string | null) {
  const [results, setResults] = useState<Results | null>(null);
  const [loading, setLoading] = useState(false);
  const [error, setError] = useState<string | null>(null);

  const load = async (input: SearchRequest) => {
    const base = input.scope === 'thread' && input.threadId ? `/api/threads/${input.threadId}/search` : '/api/search';
    setLoading(true);
    try {
      const page = await requestJson<SearchPageDto>(
        `${base}?q=${encodeURIComponent(input.query)}${input.cursor ? `&cursor=${encodeURIComponent(input.cursor)}` : ''}`,
        { token },
      );
      setResults({
        query: input.query,
        scope: input.scope,
        threadId: input.threadId,
        hits: [...(input.previous ?? []), ...page.hits],
        nextCursor: page.nextCursor,
      });
      setError(null);
    } catch (failure) {
      setError(ApiError.from(failure).message);
    } finally {
      setLoading(false);
    }
  };
  return { results, setResults, loading, error, setError, load };
}

/** One thread's hits; choosing one opens its thread at that message. */
function HitGroup(props: { title: string; hits: SearchHitDto[]; onOpen(hit: SearchHitDto): void }) {
  return (
    <section className="hit-group" aria-label={`Matches in ${props.title}`}>
      <h3 className="hit-thread">{props.title}</h3>
      <ul className="hits">
        {props.hits.map((hit) => (
          <li key={hit.messageId}>
            <button type="button" className="hit" onClick={() => props.onOpen(hit)}>
              <span className="hit-meta">
                #{hit.seq} · {ROLE_LABEL[hit.role]} · {relativeTime(hit.createdAt)}
                {hit.forkCopy ? ' · copied into this branch' : ''}
              </span>
              <MarkedSnippet hit={hit} />
            </button>
          </li>
        ))}
      </ul>
    </section>
  );
}

/** The results: how many matched, the hits by thread, and "More matches" while there are more. */
function SearchResults(props: {
  results: Results;
  loading: boolean;
  onOpen(hit: SearchHitDto): void;
  onClear(): void;
  onMore(): void;
}) {
  const { results } = props;
  return (
    <section className="search-results" aria-label="Search results">
      <header className="search-results-header">
        <span role="status">
          {results.hits.length === 0
            ? `No messages match “${results.query}”`
            : `${results.hits.length}${results.nextCursor ? '+' : ''} match${results.hits.length === 1 ? '' : 'es'} for “${results.query}”`}
        </span>
        <button type="button" className="link" onClick={props.onClear}>
          Clear
        </button>
      </header>
      {byThread(results.hits).map((group) => (
        <HitGroup key={group.threadId} title={group.title} hits={group.hits} onOpen={props.onOpen} />
      ))}
      {results.nextCursor ? (
        <button type="button" className="link" disabled={props.loading} onClick={props.onMore}>
          More matches
        </button>
      ) : null}
    </section>
  );
}

/**
 * Search of the transcripts: this chat or all of one's chats (words, "a phrase", -word). Hits are listed by
 * thread; choosing one opens its thread at that message.
 */
export function SearchBox(props: {
  token: string | null;
  threadId: string | null;
  onOpen(hit: SearchHitDto): void;
  /** A new search began or the results were cleared: the match a previous search opened is no longer one. */
  onReset(): void;
}) {
  const [query, setQuery] = useState('');
  const [scope, setScope] = useState<Scope>('all');
  const { results, setResults, loading, error, setError, load } = useSearchResults(props.token);

  const submit = () => {
    const trimmed = query.trim();
    if (!trimmed || !props.token) return;
    props.onReset();
    void load({ query: trimmed, scope, threadId: props.threadId });
  };
  const clear = () => {
    props.onReset();
    setResults(null);
    setError(null);
    setQuery('');
  };

  return (
    <div className="search">
      <form
        role="search"
        aria-label="Search messages"
        onSubmit={(event) => {
          event.preventDefault();
          submit();
        }}
      >
        <input
          type="search"
          aria-label="Search messages"
          placeholder="Search messages"
          value={query}
          maxLength={500}
          onChange={(event) => setQuery(event.target.value)}
          onKeyDown={(event) => {
            if (event.key === 'Escape') clear();
          }}
        />
        <div className="search-options">
          <select aria-label="Search in" value={scope} onChange={(event) => setScope(event.target.value as Scope)}>
            <option value="all">All chats</option>
            <option value="thread" disabled={!props.threadId}>
              This chat
            </option>
          </select>
          <button type="submit" disabled={loading || !query.trim()}>
            Search
          </button>
        </div>
      </form>
      {error ? (
        <p className="error-text" role="alert">
          {error}
        </p>
      ) : null}
      {results ? (
        <SearchResults
          results={results}
          loading={loading}
          onOpen={props.onOpen}
          onClear={clear}
          onMore={() =>
            void load({
              query: results.query,
              scope: results.scope,
              threadId: results.threadId,
              cursor: results.nextCursor!,
              previous: results.hits,
            })
          }
        />
      ) : null}
    </div>
  );
}
