import { useEffect, useId, useState } from 'react';
import { ApiError } from '../api/api-error';
import { requestJson } from '../api/request-json';

/**
 * The thread's own summary prompt (admins only): PATCH /api/admin/threads/:id/settings. Empty = the default prompt.
 * The next fold uses it; `{{fromSeq}}` and `{{throughSeq}}` name the range it may cite.
 */
export function SummaryPromptEditor(props: { threadId: string; current: string | null; onSaved(): void }) {
  const id = useId();
  const [value, setValue] = useState(props.current ?? '');
  const [error, setError] = useState<string | null>(null);
  const [status, setStatus] = useState<string | null>(null);
  useEffect(() => setValue(props.current ?? ''), [props.current]);

  const save = async (summaryPrompt: string | null) => {
    setStatus(null);
    try {
      await requestJson(`/api/admin/threads/${props.threadId}/settings`, { method: 'PATCH', json: { summaryPrompt } });
      setError(null);
      setStatus(summaryPrompt === null ? 'Default prompt restored.' : 'Summary prompt saved.');
      props.onSaved();
    } catch (caught) {
      setError(ApiError.from(caught).message.replace(/^summaryPrompt: /, ''));
    }
  };
  const dirty = value !== (props.current ?? '');
  return (
    <section className="card" aria-labelledby={`${id}-heading`}>
      <h2 id={`${id}-heading`}>Summary prompt</h2>
      <p className="muted">
        This thread's own instructions for the summarizer; empty uses the default. The next fold uses it.
      </p>
      <textarea
        id={id}
        aria-labelledby={`${id}-heading`}
        value={value}
        placeholder="The default summary prompt"
        rows={6}
        aria-invalid={error ? true : undefined}
        aria-describedby={error ? `${id}-error` : undefined}
        onChange={(event) => {
          setValue(event.target.value);
          setError(null);
          setStatus(null);
        }}
      />
      {error ? (
        <p id={`${id}-error`} className="error-text" role="alert">
          {error}
        </p>
      ) : null}
      <div className="actions">
        <button type="button" className="primary" disabled={!dirty} onClick={() => void save(value)}>
          Save prompt
        </button>
        <button type="button" disabled={props.current === null} onClick={() => void save(null)}>
          Use the default
        </button>
        {status ? (
          <span role="status" className="tag ok">
            {status}
          </span>
        ) : null}
      </div>
    </section>
  );
}
