import { useEffect, useState } from 'react';
import type { CostReportDto, CostTotalDto } from '../../../src/shared/admin-api';
import { ApiError } from '../api/api-error';
import { requestJson } from '../api/request-json';
import { navigate } from '../common/navigation';

type Grouping = CostReportDto['by'];
const GROUPINGS: { value: Grouping; label: string }[] = [
  { value: 'day', label: 'Per day' },
  { value: 'user', label: 'Per user' },
  { value: 'thread', label: 'Per thread' },
];
const TOTAL_LABELS: Record<Grouping, string> = { day: 'All days', user: 'All users', thread: 'All threads' };

function formatCost(cost: number | null): string {
  if (cost === null) return 'no price';
  return cost < 0.01 ? cost.toFixed(6) : cost.toFixed(2);
}

/** A cached share as a percentage with one decimal ("94.2%"); "—" when no call reported its cached tokens. */
export function formatShare(share: number | null): string {
  return share === null ? '—' : `${(share * 100).toFixed(1)}%`;
}

/** The figures cells of a row or of the total (everything after the group's name). */
function FigureCells({ figures }: { figures: CostTotalDto }) {
  return (
    <>
      <td>{figures.calls}</td>
      <td>{figures.promptTokens.toLocaleString()}</td>
      <td>{figures.cachedTokens.toLocaleString()}</td>
      <td title={figures.cachedShare === null ? 'no call reported its cached tokens' : undefined}>
        {formatShare(figures.cachedShare)}
      </td>
      <td>{figures.cacheWriteTokens.toLocaleString()}</td>
      <td>{figures.completionTokens.toLocaleString()}</td>
      <td>
        {formatCost(figures.cost)}
        {figures.estimatedCalls > 0 ? (
          <span className="muted" title="calls without a usage report: our token estimate">
            {' '}
            (estimate for {figures.estimatedCalls} of {figures.calls} calls)
          </span>
        ) : null}
        {figures.unpricedModels.length > 0 ? (
          <span className="muted"> — unpriced: {figures.unpricedModels.join(', ')}</span>
        ) : null}
      </td>
    </>
  );
}

/** A row's label: a thread's links to its detail. */
function RowLabel({ row, by }: { row: CostReportDto['rows'][number]; by: Grouping }) {
  if (!(by === 'thread' && row.key)) return <>{row.label}</>;
  return (
    <a
      href={`/admin/threads/${row.key}`}
      onClick={(event) => {
        event.preventDefault();
        navigate(`/admin/threads/${row.key}`);
      }}
    >
      {row.label}
    </a>
  );
}

/** The report's rows and their total. */
function CostsTable({ report, by }: { report: CostReportDto; by: Grouping }) {
  // Per user, when spend limits are enforced, each row carries the user's effective limit (null: none).
  const withLimits = report.by === 'user' && report.rows.some((row) => row.limit !== undefined);
  return (
    <table aria-label="Costs">
      <thead>
        <tr>
          <th>{by === 'day' ? 'Day (UTC)' : by === 'user' ? 'User' : 'Thread'}</th>
          <th>Calls</th>
          <th>Prompt tokens</th>
          <th>Cached</th>
          <th>Cached share</th>
          <th title="prompt tokens written to the provider's cache (Claude), priced at cacheWrite">Cache writes</th>
          <th>Completion tokens</th>
          <th>Cost</th>
          {withLimits ? <th title="the user's effective spend limit; empty: none">Limit</th> : null}
        </tr>
      </thead>
      <tbody>
        {report.rows.map((row) => (
          <tr key={row.key}>
            <td>
              <RowLabel row={row} by={by} />
            </td>
            <FigureCells figures={row} />
            {withLimits ? <td>{row.limit ?? ''}</td> : null}
          </tr>
        ))}
      </tbody>
      <tfoot>
        <tr>
          <th scope="row">{TOTAL_LABELS[report.by]}</th>
          <FigureCells figures={report.total} />
          {withLimits ? <td /> : null}
        </tr>
      </tfoot>
    </table>
  );
}

/**
 * Estimated cost of the model calls of the last 30 days per UTC day, user or thread: reported usage priced by
 * MODEL_PRICES (cached prompt tokens at their own price); calls without a usage report count our estimate and are
 * marked as such. The cached share counts only the calls whose provider reported their cached tokens; the totals row
 * covers every call of the period, the groups past the list's limit included. Per user, when spend limits are
 * enforced, a "Limit" column shows each user's effective spend limit (empty when none applies).
 */
export function CostsPanel() {
  const [by, setBy] = useState<Grouping>('day');
  const [report, setReport] = useState<CostReportDto | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    setError(null);
    requestJson<CostReportDto>(`/api/admin/costs?by=${by}&days=30`).then(setReport, (caught: unknown) =>
      setError(ApiError.from(caught).message),
    );
  }, [by]);
  return (
    <section className="card" aria-labelledby="costs-heading">
      <div className="toolbar">
        <h2 id="costs-heading">Estimated costs (30 days)</h2>
        <label>
          Group
          <select value={by} onChange={(event) => setBy(event.target.value as Grouping)} aria-label="Group costs">
            {GROUPINGS.map((grouping) => (
              <option key={grouping.value} value={grouping.value}>
                {grouping.label}
              </option>
            ))}
          </select>
        </label>
      </div>
      {error ? (
        <p className="error-text" role="alert">
          {error}
        </p>
      ) : null}
      {report && report.pricedModels.length === 0 ? <p>No prices are set (MODEL_PRICES): tokens only.</p> : null}
      {report ? <CostsTable report={report} by={by} /> : null}
    </section>
  );
}
