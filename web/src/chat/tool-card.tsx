import { useState } from 'react';
import type { MessageDto, ToolCallDto, ToolRunDto } from '../../../src/shared/api';

const FOLD_CHARS = 600;

const STATUS_LABEL: Record<ToolRunDto['status'], string> = {
  queued: 'queued',
  running: 'running',
  succeeded: 'done',
  failed: 'failed',
  timed_out: 'timed out',
  cancelled: 'cancelled',
};

function statusOf(run: ToolRunDto | null, result: MessageDto | null, answering: boolean): string {
  if (run) return run.status === 'running' ? `running ${Math.round(run.progress * 100)}%` : STATUS_LABEL[run.status];
  if (result) return result.status === 'error' ? 'failed' : 'done';
  return answering ? 'running' : 'no result';
}

/** The DOM id of a tool call's card (follow-up answers link to it). */
export function toolCardId(toolCallId: string): string {
  return `tool-${toolCallId.replace(/[^\w-]/g, '_')}`;
}

function ToolProgress({ name, run, mini }: { name: string; run: ToolRunDto; mini: boolean }) {
  return (
    <div
      className={mini ? 'progress mini' : 'progress'}
      role="progressbar"
      aria-label={`${name} progress`}
      aria-valuemin={0}
      aria-valuemax={100}
      aria-valuenow={Math.round(run.progress * 100)}
    >
      <span style={{ width: `${run.progress * 100}%` }} />
    </div>
  );
}

/** The result (or the immediate answer of a run still working), long ones folded with "Show all". */
function ToolResult(props: { text: string; active: boolean; showAll: boolean; onToggle(): void }) {
  const { text, showAll } = props;
  const folded = !showAll && text.length > FOLD_CHARS;
  return (
    <>
      <h4>{props.active ? 'Immediate answer' : 'Result'}</h4>
      <pre className="tool-result">{folded ? `${text.slice(0, FOLD_CHARS)}…` : text}</pre>
      {text.length > FOLD_CHARS ? (
        <button type="button" className="link" onClick={props.onToggle}>
          {showAll ? 'Show less' : `Show all (${text.length.toLocaleString()} characters)`}
        </button>
      ) : null}
    </>
  );
}

/** The expanded card: arguments, progress, error, Cancel while active, and the result. */
function ToolCardBody(props: {
  call: ToolCallDto;
  run: ToolRunDto | null;
  active: boolean;
  resultText: string | null;
  showAll: boolean;
  onToggleShowAll(): void;
  onCancel(runId: string): void;
}) {
  const { call, run, active, resultText } = props;
  return (
    <div className="tool-card-body" id={`${toolCardId(call.id)}-details`}>
      <h4>Arguments</h4>
      <pre className="tool-args">{JSON.stringify(call.args, null, 2)}</pre>
      {run && active ? (
        <>
          <ToolProgress name={call.name} run={run} mini={false} />
          {run.progressNote ? <p className="tool-note">{run.progressNote}</p> : null}
        </>
      ) : null}
      {run?.error ? <p className="error-text">{run.error}</p> : null}
      {run && active ? (
        <button type="button" className="danger" onClick={() => props.onCancel(run.id)}>
          Cancel {call.name}
        </button>
      ) : null}
      {resultText !== null ? (
        <ToolResult text={resultText} active={active} showAll={props.showAll} onToggle={props.onToggleShowAll} />
      ) : null}
    </div>
  );
}

/**
 * A tool call: collapsed to its name and status; expanded it shows the arguments, a progress bar while an
 * async run works, the result (long ones folded, "Show all"), and Cancel while the run is active.
 */
export function ToolCard(props: {
  call: ToolCallDto;
  run: ToolRunDto | null;
  result: MessageDto | null;
  answering: boolean;
  onCancel(runId: string): void;
}) {
  const { call, run, result } = props;
  const [open, setOpen] = useState(false);
  const [showAll, setShowAll] = useState(false);
  const status = statusOf(run, result, props.answering);
  const active = run !== null && (run.status === 'queued' || run.status === 'running');
  const resultText = result?.content ?? run?.resultPreview ?? null;
  return (
    <section
      className={`tool-card tool-${active ? 'active' : 'idle'}`}
      id={toolCardId(call.id)}
      aria-label={`Tool ${call.name}, ${status}`}
    >
      <button
        type="button"
        className="tool-card-header"
        aria-expanded={open}
        aria-controls={`${toolCardId(call.id)}-details`}
        onClick={() => setOpen(!open)}
      >
        <span className="tool-icon" aria-hidden="true">
          ⚙
        </span>
        <span className="tool-name">{call.name}</span>
        <span className="tool-status">{status}</span>
      </button>
      {active && !open ? <ToolProgress name={call.name} run={run} mini /> : null}
      {open ? (
        <ToolCardBody
          {...{ call, run, active, resultText, showAll }}
          onToggleShowAll={() => setShowAll(!showAll)}
          onCancel={props.onCancel}
        />
      ) : null}
    </section>
  );
}
