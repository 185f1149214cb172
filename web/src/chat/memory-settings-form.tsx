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

type FormErrors = Partial<Record<Field | 'form', string>>;

/** The saved settings (reloaded when another tab changes them), the draft being edited, errors and status. */
function useSettingsDraft(props: { threadId: string; token: string | null; thread: ThreadDto | null }) {
  const { threadId, token, thread } = props;
  const [settings, setSettings] = useState<ThreadMemorySettingsDto | null>(null);
  const [draft, setDraft] = useState<Draft | null>(null);
  const [errors, setErrors] = useState<FormErrors>({});
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
  return { settings, setSettings, draft, setDraft, errors, setErrors, status, setStatus, saving, setSaving };
}

type SettingsDraft = ReturnType<typeof useSettingsDraft>;

/** Saves what changed; a validation error goes next to the field it names, anything else under the form. */
async function saveSettings(input: {
  threadId: string;
  token: string | null;
  patch: Record<string, string | null>;
  form: SettingsDraft;
}) {
  const { threadId, token, patch, form } = input;
  form.setSaving(true);
  form.setStatus(null);
  try {
    const updated = await requestJson<ThreadMemorySettingsDto>(`/api/threads/${threadId}/settings`, {
      method: 'PATCH',
      json: patch,
      token,
    });
    form.setSettings(updated);
    form.setDraft(draftOf(updated));
    form.setErrors({});
    form.setStatus('Memory settings saved.');
  } catch (error) {
    const apiError = ApiError.from(error);
    const field = apiError.code === 'VALIDATION' ? fieldOf(apiError.message) : null;
    form.setErrors({
      [field ?? 'form']: field
        ? apiError.message.replace(/^(?:Invalid settings: )?(trigger|keep|memory):?\s*/, '')
        : apiError.message,
    });
  } finally {
    form.setSaving(false);
  }
}

type Change = (patchDraft: Partial<Draft>, field: Field) => void;

function FieldError({ error }: { error: string | undefined }) {
  return error ? (
    <small className="error-text field-error" role="alert">
      {error}
    </small>
  ) : null;
}

function MemoryModeFieldset({ draft, error, change }: { draft: Draft; error: string | undefined; change: Change }) {
  return (
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
      <FieldError error={error} />
    </fieldset>
  );
}

function RecallScopeField(props: {
  threadId: string;
  draft: Draft;
  defaultScope: string;
  error: string | undefined;
  change: Change;
}) {
  const { threadId, draft, change } = props;
  return (
    <div className="field">
      <label htmlFor={`${threadId}-recall-scope`}>Recall from</label>
      <select
        id={`${threadId}-recall-scope`}
        value={draft.recallScope}
        onChange={(event) => change({ recallScope: event.target.value as Draft['recallScope'] }, 'recallScope')}
      >
        <option value="">Default ({props.defaultScope === 'user' ? 'all my chats' : 'this chat only'})</option>
        <option value="user">All my chats</option>
        <option value="thread">This chat only</option>
      </select>
      <small className="muted">
        Where older messages matching your new one are looked up (never this chat's branches).
      </small>
      <FieldError error={props.error} />
    </div>
  );
}

function SettingsActions(props: { dirty: boolean; saving: boolean; status: string | null; onReset(): void }) {
  return (
    <div className="actions">
      <button type="submit" className="primary" disabled={!props.dirty || props.saving}>
        {props.saving ? 'Saving…' : 'Save settings'}
      </button>
      {props.dirty ? (
        <button type="button" onClick={props.onReset}>
          Reset
        </button>
      ) : null}
      {props.status ? (
        <span role="status" className="tag ok">
          {props.status}
        </span>
      ) : null}
    </div>
  );
}

/**
 * The thread's memory settings (PATCH /api/threads/:id/settings): when a fold starts, what it keeps, and summary or
 * window-only memory. Validation errors show next to their field; changes from another tab reload the form.
 */
export function MemorySettingsForm(props: { threadId: string; token: string | null; thread: ThreadDto | null }) {
  const { threadId, token } = props;
  const form = useSettingsDraft(props);
  const { settings, draft, errors } = form;
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
    await saveSettings({ threadId, token, patch, form });
  };
  const change: Change = (patchDraft, field) => {
    form.setDraft({ ...draft, ...patchDraft });
    form.setErrors((current) => ({ ...current, [field]: undefined, form: undefined }));
    form.setStatus(null);
  };

  return (
    <form className="memory-settings" aria-label="Memory settings" onSubmit={(event) => void submit(event)} noValidate>
      <MemoryModeFieldset draft={draft} error={errors.memory} change={change} />
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
      <RecallScopeField
        {...{ threadId, draft, change }}
        defaultScope={settings.defaults.recallScope}
        error={errors.recallScope}
      />
      <p className="figures">
        {formatTokens(settings.pinnedTokens)} of {formatTokens(settings.pinnedMaxTokens)} tokens pinned
      </p>
      {errors.form ? (
        <p className="error-text" role="alert">
          {errors.form}
        </p>
      ) : null}
      <SettingsActions
        dirty={dirty}
        saving={form.saving}
        status={form.status}
        onReset={() => {
          form.setDraft(saved);
          form.setErrors({});
        }}
      />
    </form>
  );
}
