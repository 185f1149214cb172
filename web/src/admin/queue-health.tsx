import type { QueueListDto } from '../../../src/shared/admin-api';

/** Waiting / active / failed jobs per queue, and the BullMQ dashboard (a server page). */
export function QueueHealth(props: { queues: QueueListDto | null; error: string | null; onRefresh(): void }) {
  return (
    <section className="card" aria-labelledby="queues-heading">
      <div className="toolbar">
        <h2 id="queues-heading">Queue health</h2>
        <button type="button" onClick={props.onRefresh}>
          Refresh
        </button>
        <a href="/admin/jobs">Open the jobs dashboard</a>
      </div>
      {props.error ? (
        <p className="error-text" role="alert">
          {props.error}
        </p>
      ) : null}
      <div className="queue-health">
        {props.queues?.queues.map((counts) => (
          <div key={counts.name} className="queue" aria-label={`${counts.name} queue`}>
            <strong>{counts.name}</strong>
            <div className="queue-health">
              <span className="stat">
                <strong>{counts.waiting}</strong>waiting
              </span>
              <span className="stat">
                <strong>{counts.active}</strong>active
              </span>
              <span className={`stat${counts.failed > 0 ? ' error-text' : ''}`}>
                <strong>{counts.failed}</strong>failed
              </span>
            </div>
          </div>
        ))}
      </div>
    </section>
  );
}
