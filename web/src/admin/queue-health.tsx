import type { QueueCountsDto } from './admin-types';

/** Waiting / active / failed jobs per queue, and the BullMQ dashboard (a server page). */
export function QueueHealth(props: { queues: Record<string, QueueCountsDto> | null; error: string | null; onRefresh(): void }) {
  const entries = Object.entries(props.queues ?? {}).filter(([, counts]) => typeof counts === 'object' && counts !== null && 'waiting' in counts);
  return (
    <section className="card" aria-labelledby="queues-heading">
      <div className="toolbar">
        <h2 id="queues-heading">Queue health</h2>
        <button type="button" onClick={props.onRefresh}>Refresh</button>
        <a href="/admin/jobs">Open the jobs dashboard</a>
      </div>
      {props.error ? <p className="error-text" role="alert">{props.error}</p> : null}
      <div className="queue-health">
        {entries.map(([name, counts]) => (
          <div key={name} className="queue" aria-label={`${name} queue`}>
            <strong>{name}</strong>
            <div className="queue-health">
              <span className="stat"><strong>{counts.waiting}</strong>waiting</span>
              <span className="stat"><strong>{counts.active}</strong>active</span>
              <span className={`stat${counts.failed > 0 ? ' error-text' : ''}`}><strong>{counts.failed}</strong>failed</span>
            </div>
          </div>
        ))}
      </div>
    </section>
  );
}
