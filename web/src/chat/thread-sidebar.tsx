import { useState, type ReactNode } from 'react';
import type { ThreadDto } from '../../../src/shared/api';
import { relativeTime } from '../common/format';

function ThreadItem(props: { thread: ThreadDto; active: boolean; onOpen(): void; onRename(title: string): void }) {
  const [editing, setEditing] = useState(false);
  const [title, setTitle] = useState(props.thread.title);
  if (editing) {
    return (
      <li className="thread-item editing">
        <form
          onSubmit={(event) => {
            event.preventDefault();
            if (title.trim()) props.onRename(title.trim());
            setEditing(false);
          }}
        >
          <input
            aria-label="Thread title"
            value={title}
            autoFocus
            maxLength={200}
            onChange={(event) => setTitle(event.target.value)}
            onKeyDown={(event) => {
              if (event.key === 'Escape') {
                setTitle(props.thread.title);
                setEditing(false);
              }
            }}
          />
          <button type="submit">Save</button>
        </form>
      </li>
    );
  }
  return (
    <li className={`thread-item${props.active ? ' active' : ''}`}>
      <button
        type="button"
        className="thread-open"
        aria-current={props.active ? 'page' : undefined}
        onClick={props.onOpen}
      >
        <span className="thread-title">{props.thread.title}</span>
        <span className="thread-time">{relativeTime(props.thread.lastActivityAt)}</span>
      </button>
      <button
        type="button"
        className="icon"
        aria-label={`Rename ${props.thread.title}`}
        onClick={() => {
          setTitle(props.thread.title);
          setEditing(true);
        }}
      >
        ✎
      </button>
    </li>
  );
}

/** Threads, most recent activity first; new thread; rename in place. */
export function ThreadSidebar(props: {
  threads: ThreadDto[];
  activeId: string | null;
  onOpen(id: string): void;
  onCreate(): void;
  onRename(id: string, title: string): void;
  hasMore: boolean;
  onMore(): void;
  search?: ReactNode;
}) {
  const sorted = [...props.threads].sort((left, right) => right.lastActivityAt.localeCompare(left.lastActivityAt));
  return (
    <nav className="sidebar" aria-label="Threads">
      <button type="button" className="primary new-thread" onClick={props.onCreate}>
        + New chat
      </button>
      {props.search}
      <ul className="thread-list">
        {sorted.map((thread) => (
          <ThreadItem
            key={thread.id}
            thread={thread}
            active={thread.id === props.activeId}
            onOpen={() => props.onOpen(thread.id)}
            onRename={(title) => props.onRename(thread.id, title)}
          />
        ))}
      </ul>
      {props.hasMore ? (
        <button type="button" className="link" onClick={props.onMore}>
          More threads
        </button>
      ) : null}
    </nav>
  );
}
