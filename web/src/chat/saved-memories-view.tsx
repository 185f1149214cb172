import { useCallback, useEffect, useId, useState, type FormEvent } from 'react';
import type { SavedMemoryDto, SavedMemoryListDto, ThreadDto } from '../../../src/shared/api';
import { ApiError } from '../api/api-error';
import { requestJson } from '../api/request-json';
import { relativeTime } from '../common/format';

/** Longest text of a saved memory (the server's limit). */
const MAX_CHARS = 1000;

function ItemEditor(props: {
  initial: string;
  label: string;
  submitLabel: string;
  onSubmit(text: string): Promise<void>;
  onCancel?(): void;
}) {
  const id = useId();
  const [text, setText] = useState(props.initial);
  const [error, setError] = useState<string | null>(null);
  const [saving, setSaving] = useState(false);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setSaving(true);
    setError(null);
    try {
      await props.onSubmit(text);
      setText(props.initial);
    } catch (caught) {
      setError(ApiError.from(caught).message);
    } finally {
      setSaving(false);
    }
  };
  return (
    <form className="saved-memory-editor" onSubmit={(event) => void submit(event)} noValidate>
      <label htmlFor={id} className="visually-hidden">
        {props.label}
      </label>
      <textarea
        id={id}
        value={text}
        rows={2}
        maxLength={MAX_CHARS}
        placeholder="e.g. I am vegetarian."
        aria-label={props.label}
        aria-invalid={error ? true : undefined}
        onChange={(event) => {
          setText(event.target.value);
          setError(null);
        }}
      />
      {error ? (
        <small className="error-text field-error" role="alert">
          {error}
        </small>
      ) : null}
      <div className="actions">
        <button type="submit" className="primary" disabled={saving || text.trim() === ''}>
          {saving ? 'Saving…' : props.submitLabel}
        </button>
        {props.onCancel ? (
          <button type="button" onClick={props.onCancel}>
            Cancel
          </button>
        ) : null}
      </div>
    </form>
  );
}

/** Where the item came from (a link that opens that chat at the message), when, and whether the model gets it. */
function ItemFigures(props: {
  item: SavedMemoryDto;
  chatTitle: string | null;
  onOpenSource(source: { threadId: string; seq: number }): void;
}) {
  const { item } = props;
  return (
    <p className="figures">
      {item.source ? (
        <a
          href={`/threads/${item.source.threadId}`}
          onClick={(event) => {
            event.preventDefault();
            if (item.source) props.onOpenSource(item.source);
          }}
        >
          From {props.chatTitle ? `“${props.chatTitle}”` : 'a chat'}, message #{item.source.seq}
        </a>
      ) : (
        <span className="muted">Added by you</span>
      )}
      {' · '}
      {relativeTime(item.updatedAt)}
      {item.status === 'pending' ? (
        <span className="tag warn">Not sent until you approve it</span>
      ) : item.inContext ? null : (
        <span className="tag warn" title="Over USER_MEMORY_TOKENS: the newest items win">
          Not sent: over the limit
        </span>
      )}
    </p>
  );
}

/** A proposal's Approve, Dismiss and Edit; a saved item's Edit and Delete. */
function ItemActions(props: {
  item: SavedMemoryDto;
  act(path: string, method: 'POST' | 'DELETE'): Promise<void>;
  onEdit(): void;
}) {
  const { item, act } = props;
  if (item.status === 'pending')
    return (
      <div className="actions">
        <button
          type="button"
          className="primary"
          onClick={() => void act(`/api/memory/${item.id}/approve`, 'POST')}
          aria-label={`Approve “${item.text}”`}
        >
          Approve
        </button>
        <button
          type="button"
          onClick={() => void act(`/api/memory/${item.id}/dismiss`, 'POST')}
          aria-label={`Dismiss “${item.text}”`}
        >
          Dismiss
        </button>
        <button type="button" className="link" onClick={props.onEdit} aria-label={`Edit “${item.text}”`}>
          Edit
        </button>
      </div>
    );
  return (
    <div className="actions">
      <button type="button" className="link" onClick={props.onEdit} aria-label={`Edit “${item.text}”`}>
        Edit
      </button>
      <button
        type="button"
        className="link danger"
        onClick={() => void act(`/api/memory/${item.id}`, 'DELETE')}
        aria-label={`Delete “${item.text}”`}
      >
        Delete
      </button>
    </div>
  );
}

function ItemRow(props: {
  item: SavedMemoryDto;
  chatTitle: string | null;
  token: string | null;
  onChanged(): void;
  onOpenSource(source: { threadId: string; seq: number }): void;
}) {
  const { item } = props;
  const [editing, setEditing] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const act = async (path: string, method: 'POST' | 'DELETE') => {
    try {
      await requestJson(path, { method, token: props.token });
      props.onChanged();
    } catch (caught) {
      setError(ApiError.from(caught).message);
    }
  };
  return (
    <li className="saved-memory" aria-label={item.text}>
      {editing ? (
        <ItemEditor
          initial={item.text}
          label="Edit saved memory"
          submitLabel="Save"
          onCancel={() => setEditing(false)}
          onSubmit={async (text) => {
            await requestJson(`/api/memory/${item.id}`, { method: 'PATCH', json: { text }, token: props.token });
            setEditing(false);
            props.onChanged();
          }}
        />
      ) : (
        <p className="saved-memory-text">{item.text}</p>
      )}
      <ItemFigures item={item} chatTitle={props.chatTitle} onOpenSource={props.onOpenSource} />
      {editing ? null : <ItemActions item={item} act={act} onEdit={() => setEditing(true)} />}
      {error ? (
        <small className="error-text" role="alert">
          {error}
        </small>
      ) : null}
    </li>
  );
}

/**
 * Saved memories (GET/POST/PATCH/DELETE /api/memory): what the model gets in every chat of the user. Each item names
 * its source (the message that asked the model to remember it), which opens that chat at that message. The model's
 * proposals (SAVE_MEMORY_TOOL=confirm) are listed first, with Approve and Dismiss: none reaches the model before.
 */
export function SavedMemoriesView(props: {
  token: string | null;
  threads: ThreadDto[];
  onOpenSource(source: { threadId: string; seq: number }): void;
  onClose(): void;
}) {
  const { token } = props;
  const [items, setItems] = useState<SavedMemoryDto[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const load = useCallback(() => {
    if (!token) return;
    requestJson<SavedMemoryListDto>('/api/memory', { token }).then(
      (list) => {
        setItems(list.items);
        setError(null);
      },
      (caught: unknown) => setError(ApiError.from(caught).message),
    );
  }, [token]);
  useEffect(load, [load]);
  const titleOf = (threadId: string) => props.threads.find((thread) => thread.id === threadId)?.title ?? null;
  const proposals = (items ?? []).filter((item) => item.status === 'pending');
  const saved = (items ?? []).filter((item) => item.status !== 'pending');
  const row = (item: SavedMemoryDto) => (
    <ItemRow
      key={`${item.id}-${item.updatedAt}-${item.status}`}
      item={item}
      chatTitle={item.source ? titleOf(item.source.threadId) : null}
      token={token}
      onChanged={load}
      onOpenSource={props.onOpenSource}
    />
  );
  return (
    <section className="saved-memories" aria-labelledby="saved-memories-heading">
      <header className="panel-header">
        <h2 id="saved-memories-heading">Saved memories</h2>
        <button type="button" className="icon" aria-label="Back to the chat" onClick={props.onClose}>
          ✕
        </button>
      </header>
      <p className="muted">The model sees these in every chat. Ask it to remember something, or add it here.</p>
      <ItemEditor
        initial=""
        label="New saved memory"
        submitLabel="Add"
        onSubmit={async (text) => {
          await requestJson('/api/memory', { method: 'POST', json: { text }, token });
          load();
        }}
      />
      {error ? (
        <p className="error-text" role="alert">
          {error}
        </p>
      ) : null}
      {proposals.length > 0 ? (
        <>
          <h3 id="memory-proposals-heading">Proposed by the model</h3>
          <p className="muted">Not sent to the model until you approve them.</p>
          <ul className="saved-memory-list" aria-labelledby="memory-proposals-heading">
            {proposals.map(row)}
          </ul>
        </>
      ) : null}
      {!items ? (
        <p className="muted">Loading…</p>
      ) : saved.length === 0 ? (
        <p className="muted">No saved memories yet.</p>
      ) : (
        <ul className="saved-memory-list" aria-label="Saved memories">
          {saved.map(row)}
        </ul>
      )}
    </section>
  );
}
