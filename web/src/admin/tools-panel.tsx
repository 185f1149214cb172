import { useCallback, useEffect, useState } from 'react';
import type { AdminToolListDto } from '../../../src/shared/admin-api';
import { ApiError } from '../api/api-error';
import { requestJson } from '../api/request-json';

const SOURCE_LABEL = { 'built-in': 'built-in', mcp: 'MCP', external: 'external runner' } as const;

/** Every tool the model may be offered (GET /api/admin/tools): source, mode, whether it is offered, MCP servers' state. */
export function ToolsPanel() {
  const [list, setList] = useState<AdminToolListDto | null>(null);
  const [error, setError] = useState<string | null>(null);
  const load = useCallback(async () => {
    try {
      setList(await requestJson<AdminToolListDto>('/api/admin/tools'));
      setError(null);
    } catch (caught) {
      setError(ApiError.from(caught).message);
    }
  }, []);
  useEffect(() => {
    void load();
  }, [load]);

  return (
    <section className="card" aria-labelledby="tools-heading">
      <div className="toolbar">
        <h2 id="tools-heading">Tools</h2>
        <button type="button" onClick={() => void load()}>
          Refresh
        </button>
      </div>
      {error ? (
        <p className="error-text" role="alert">
          {error}
        </p>
      ) : null}
      {list && list.servers.length > 0 ? (
        <ul aria-label="MCP servers">
          {list.servers.map((server) => (
            <li key={server.name}>
              <strong>{server.name}</strong> ({server.transport}): {server.state}, {server.tools} tools
              {server.supportsTasks ? ', tasks' : ''}
              {server.restarts > 0 ? `, ${server.restarts} restarts` : ''}
              {server.lastError ? <span className="error-text"> · {server.lastError}</span> : null}
            </li>
          ))}
        </ul>
      ) : null}
      {list ? (
        <table className="data" aria-label="Tools">
          <thead>
            <tr>
              <th scope="col">Tool</th>
              <th scope="col">Source</th>
              <th scope="col">Mode</th>
              <th scope="col">Offered</th>
              <th scope="col">Schema tokens</th>
            </tr>
          </thead>
          <tbody>
            {list.tools.map((tool) => (
              <tr key={tool.name}>
                <td title={tool.description}>
                  <code>{tool.name}</code>
                </td>
                <td>
                  {SOURCE_LABEL[tool.source]}
                  {tool.server ? ` · ${tool.server}${tool.serverState ? ` (${tool.serverState})` : ''}` : ''}
                  {tool.url ? ` · ${tool.url}` : ''}
                </td>
                <td>
                  {tool.mode}
                  {tool.background ? ' · background' : ''}
                </td>
                <td>{tool.offered ? 'yes' : 'no: past TOOL_SCHEMA_MAX_TOKENS'}</td>
                <td>{tool.schemaTokens}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </section>
  );
}
