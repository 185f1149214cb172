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
  const folded = resultText !== null && !showAll && resultText.length > FOLD_CHARS;
  const panelId = `${toolCardId(call.id)}-details`;
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
        aria-controls={panelId}
        onClick={() => setOpen(!open)}
      >
        <span className="tool-icon" aria-hidden="true">
          ⚙
        </span>
        <span className="tool-name">{call.name}</span>
        <span className="tool-status">{status}</span>
      </button>
      {active && !open ? (
        <div
          className="progress mini"
          role="progressbar"
          aria-label={`${call.name} progress`}
          aria-valuemin={0}
          aria-valuemax={100}
          aria-valuenow={Math.round(run.progress * 100)}
        >
          <span style={{ width: `${run.progress * 100}%` }} />
        </div>
      ) : null}
      {open ? (
        <div className="tool-card-body" id={panelId}>
          <h4>Arguments</h4>
          <pre className="tool-args">{JSON.stringify(call.args, null, 2)}</pre>
          {run && active ? (
            <>
              <div
                className="progress"
                role="progressbar"
                aria-label={`${call.name} progress`}
                aria-valuemin={0}
                aria-valuemax={100}
                aria-valuenow={Math.round(run.progress * 100)}
              >
                <span style={{ width: `${run.progress * 100}%` }} />
              </div>
              {run.progressNote ? <p className="tool-note">{run.progressNote}</p> : null}
            </>
          ) : null}
          {run?.error ? <p className="error-text">{run.error}</p> : null}
          {active ? (
            <button type="button" className="danger" onClick={() => props.onCancel(run.id)}>
              Cancel {call.name}
            </button>
          ) : null}
          {resultText !== null ? (
            <>
              <h4>{active ? 'Immediate answer' : 'Result'}</h4>
              <pre className="tool-result">{folded ? `${resultText.slice(0, FOLD_CHARS)}…` : resultText}</pre>
              {resultText.length > FOLD_CHARS ? (
                <button type="button" className="link" onClick={() => setShowAll(!showAll)}>
                  {showAll ? 'Show less' : `Show all (${resultText.length.toLocaleString()} characters)`}
                </button>
              ) : null}
            </>
          ) : null}
        </div>
      ) : null}
    </section>
  );
}
