import { useEffect, useState } from 'react';
import type { CostReportDto } from '../../../src/shared/admin-api';
import { ApiError } from '../api/api-error';
import { requestJson } from '../api/request-json';
import { navigate } from '../common/navigation';

type Grouping = CostReportDto['by'];
const GROUPINGS: { value: Grouping; label: string }[] = [{ value: 'day', label: 'Per day' }, { value: 'user', label: 'Per user' }, { value: 'thread', label: 'Per thread' }];

function formatCost(cost: number | null): string {
  if (cost === null) return 'no price';
  return cost < 0.01 ? cost.toFixed(6) : cost.toFixed(2);
}

/**
 * Estimated cost of the model calls of the last 30 days per UTC day, user or thread: reported usage priced by
 * MODEL_PRICES (cached prompt tokens at their own price); calls without a usage report count our estimate and are
 * marked as such.
 */
export function CostsPanel() {
  const [by, setBy] = useState<Grouping>('day');
  const [report, setReport] = useState<CostReportDto | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    setError(null);
    requestJson<CostReportDto>(`/api/admin/costs?by=${by}&days=30`).then(setReport, (caught: unknown) => setError(ApiError.from(caught).message));
  }, [by]);
  return (
    <section className="card" aria-labelledby="costs-heading">
      <div className="toolbar">
        <h2 id="costs-heading">Estimated costs (30 days)</h2>
        <label>
          Group
          <select value={by} onChange={(event) => setBy(event.target.value as Grouping)} aria-label="Group costs">
            {GROUPINGS.map((grouping) => <option key={grouping.value} value={grouping.value}>{grouping.label}</option>)}
          </select>
        </label>
      </div>
      {error ? <p className="error-text" role="alert">{error}</p> : null}
      {report && report.pricedModels.length === 0 ? <p>No prices are set (MODEL_PRICES): tokens only.</p> : null}
      {report ? (
        <table aria-label="Costs">
          <thead>
            <tr><th>{by === 'day' ? 'Day (UTC)' : by === 'user' ? 'User' : 'Thread'}</th><th>Calls</th><th>Prompt tokens</th><th>Cached</th><th>Completion tokens</th><th>Cost</th></tr>
          </thead>
          <tbody>
            {report.rows.map((row) => (
              <tr key={row.key}>
                <td>{by === 'thread' && row.key ? <a href={`/admin/threads/${row.key}`} onClick={(event) => { event.preventDefault(); navigate(`/admin/threads/${row.key}`); }}>{row.label}</a> : row.label}</td>
                <td>{row.calls}</td>
                <td>{row.promptTokens.toLocaleString()}</td>
                <td>{row.cachedTokens.toLocaleString()}</td>
                <td>{row.completionTokens.toLocaleString()}</td>
                <td>
                  {formatCost(row.cost)}
                  {row.estimatedCalls > 0 ? <span className="muted" title="calls without a usage report: our token estimate"> (estimate for {row.estimatedCalls} of {row.calls} calls)</span> : null}
                  {row.unpricedModels.length > 0 ? <span className="muted"> — unpriced: {row.unpricedModels.join(', ')}</span> : null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </section>
  );
}
