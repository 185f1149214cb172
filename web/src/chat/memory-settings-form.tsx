import { useEffect, useId, useState, type FormEvent } from 'react';
import type { ThreadDto, ThreadMemorySettingsDto } from '../../../src/shared/api';
import { ApiError } from '../api/api-error';
import { requestJson } from '../api/request-json';
import { formatTokens } from '../common/format';

type Field = 'trigger' | 'keep' | 'memory' | 'recallScope';
/** `recallScope` '' is the deployment's default (RECALL_SCOPE). */
type Draft = { trigger: string; keep: string; memory: 'summary' | 'window-only'; recallScope: '' | 'thread' | 'user' };

function draftOf(settings: ThreadMemorySettingsDto): Draft {
  return {
    trigger: settings.trigger ?? '',
    keep: settings.keep ?? '',
    memory: settings.memory,
    recallScope: settings.recallScope ?? '',
  };
}

/** The field a validation message names (`trigger: ...`, `keep: ...`, `Invalid settings: memory ...`), else null. */
function fieldOf(message: string): Field | null {
  const match = /^(?:Invalid settings: )?(trigger|keep|memory|recallScope)\b/.exec(message);
  return (match?.[1] as Field | undefined) ?? null;
}

/** Only what changed: the server attributes a policy error to the field that was sent. Empty = the deployment's default. */
function patchOf(draft: Draft, saved: Draft): Record<string, string | null> {
  const patch: Record<string, string | null> = {};
  if (draft.trigger.trim() !== saved.trigger) patch.trigger = draft.trigger.trim() || null;
  if (draft.keep.trim() !== saved.keep) patch.keep = draft.keep.trim() || null;
  if (draft.memory !== saved.memory) patch.memory = draft.memory;
  if (draft.recallScope !== saved.recallScope) patch.recallScope = draft.recallScope || null;
  return patch;
}

function PolicyInput(props: {
  label: string;
  hint: string;
  value: string;
  placeholder: string;
  error: string | undefined;
  onChange(value: string): void;
}) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{props.label}</label>
      <input
        id={id}
        value={props.value}
        placeholder={props.placeholder}
        spellCheck={false}
        autoComplete="off"
        aria-invalid={props.error ? true : undefined}
        aria-describedby={`${id}-hint${props.error ? ` ${id}-error` : ''}`}
        onChange={(event) => props.onChange(event.target.value)}
      />
      <small id={`${id}-hint`} className="muted">
        {props.hint}
      </small>
      {props.error ? (
        <small id={`${id}-error`} className="error-text field-error" role="alert">
          {props.error}
        </small>
      ) : null}
    </div>
  );
}

/**
 * The thread's memory settings (PATCH /api/threads/:id/settings): when a fold starts, what it keeps, and summary or
 * window-only memory. Validation errors show next to their field; changes from another tab reload the form.
 */
export function MemorySettingsForm(props: { threadId: string; token: string | null; thread: ThreadDto | null }) {
  const { threadId, token, thread } = props;
  const [settings, setSettings] = useState<ThreadMemorySettingsDto | null>(null);
  const [draft, setDraft] = useState<Draft | null>(null);
  const [errors, setErrors] = useState<Partial<Record<Field | 'form', string>>>({});
  const [status, setStatus] = useState<string | null>(null);
  const [saving, setSaving] = useState(false);
  const liveKey = thread
    ? `${thread.memoryMode}|${thread.settings.trigger}|${thread.settings.keep}|${thread.settings.recallTokens}|${thread.settings.recallScope}`
    : '';

  useEffect(() => {
    if (!token) return;
    requestJson<ThreadMemorySettingsDto>(`/api/threads/${threadId}/settings`, { token }).then(
      (loaded) => {
        setSettings(loaded);
        setDraft(draftOf(loaded));
      },
      (error: unknown) => setErrors({ form: ApiError.from(error).message }),
    );
  }, [threadId, token, liveKey]);

  if (!settings || !draft)
    return errors.form ? (
      <p className="error-text" role="alert">
        {errors.form}
      </p>
    ) : (
      <p className="muted">Loading settings…</p>
    );
  const saved = draftOf(settings);
  const patch = patchOf(draft, saved);
  const dirty = Object.keys(patch).length > 0;

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (!dirty) return;
    setSaving(true);
    setStatus(null);
    try {
      const updated = await requestJson<ThreadMemorySettingsDto>(`/api/threads/${threadId}/settings`, {
        method: 'PATCH',
        json: patch,
        token,
      });
      setSettings(updated);
      setDraft(draftOf(updated));
      setErrors({});
      setStatus('Memory settings saved.');
    } catch (error) {
      const apiError = ApiError.from(error);
      const field = apiError.code === 'VALIDATION' ? fieldOf(apiError.message) : null;
      setErrors({
        [field ?? 'form']: field
          ? apiError.message.replace(/^(?:Invalid settings: )?(trigger|keep|memory):?\s*/, '')
          : apiError.message,
      });
    } finally {
      setSaving(false);
    }
  };
  const change = (patchDraft: Partial<Draft>, field: Field) => {
    setDraft({ ...draft, ...patchDraft });
    setErrors((current) => ({ ...current, [field]: undefined, form: undefined }));
    setStatus(null);
  };

  return (
    <form className="memory-settings" aria-label="Memory settings" onSubmit={(event) => void submit(event)} noValidate>
      <fieldset>
        <legend>Memory</legend>
        <label className="choice">
          <input
            type="radio"
            name="memory-mode"
            value="summary"
            checked={draft.memory === 'summary'}
            onChange={() => change({ memory: 'summary' }, 'memory')}
          />
          Summary <small className="muted">older messages are folded into a running summary</small>
        </label>
        <label className="choice">
          <input
            type="radio"
            name="memory-mode"
            value="window-only"
            checked={draft.memory === 'window-only'}
            onChange={() => change({ memory: 'window-only' }, 'memory')}
          />
          Window only <small className="muted">no summary: the oldest messages simply leave</small>
        </label>
        {errors.memory ? (
          <small className="error-text field-error" role="alert">
            {errors.memory}
          </small>
        ) : null}
      </fieldset>
      <PolicyInput
        label="Fold when"
        value={draft.trigger}
        placeholder={settings.defaults.trigger}
        error={errors.trigger}
        hint={`e.g. tokens=3000 or messages=40; empty: the default (${settings.defaults.trigger})`}
        onChange={(value) => change({ trigger: value }, 'trigger')}
      />
      <PolicyInput
        label="Keep after a fold"
        value={draft.keep}
        placeholder={settings.defaults.keep}
        error={errors.keep}
        hint={`e.g. messages=12 or tokens=1500; empty: the default (${settings.defaults.keep})`}
        onChange={(value) => change({ keep: value }, 'keep')}
      />
      <div className="field">
        <label htmlFor={`${threadId}-recall-scope`}>Recall from</label>
        <select
          id={`${threadId}-recall-scope`}
          value={draft.recallScope}
          onChange={(event) => change({ recallScope: event.target.value as Draft['recallScope'] }, 'recallScope')}
        >
          <option value="">
            Default ({settings.defaults.recallScope === 'user' ? 'all my chats' : 'this chat only'})
          </option>
          <option value="user">All my chats</option>
          <option value="thread">This chat only</option>
        </select>
        <small className="muted">
          Where older messages matching your new one are looked up (never this chat's branches).
        </small>
        {errors.recallScope ? (
          <small className="error-text field-error" role="alert">
            {errors.recallScope}
          </small>
        ) : null}
      </div>
      <p className="figures">
        {formatTokens(settings.pinnedTokens)} of {formatTokens(settings.pinnedMaxTokens)} tokens pinned
      </p>
      {errors.form ? (
        <p className="error-text" role="alert">
          {errors.form}
        </p>
      ) : null}
      <div className="actions">
        <button type="submit" className="primary" disabled={!dirty || saving}>
          {saving ? 'Saving…' : 'Save settings'}
        </button>
        {dirty ? (
          <button
            type="button"
            onClick={() => {
              setDraft(saved);
              setErrors({});
            }}
          >
            Reset
          </button>
        ) : null}
        {status ? (
          <span role="status" className="tag ok">
            {status}
          </span>
        ) : null}
      </div>
    </form>
  );
}
