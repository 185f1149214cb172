import { useCallback, useState } from 'react';
import type { MessageContextDto, ModelCallPointDto } from '../../../src/shared/api';
import type { AdminThreadDetailDto } from '../../../src/shared/admin-api';
import { requestJson } from '../api/request-json';
import { formatTokens, relativeTime } from '../common/format';
import { WhatTheModelSaw } from '../common/what-the-model-saw';
import { TokensChart } from './tokens-chart';

/** The share of prompt tokens the provider served from its prompt cache, over the calls that reported it. */
export function cachedShare(calls: readonly ModelCallPointDto[]): { share: number; calls: number } | null {
  const reported = calls.filter(
    (call) => call.reportedCachedTokens !== null && call.promptTokensSource === 'provider' && call.promptTokens > 0,
  );
  const prompt = reported.reduce((sum, call) => sum + call.promptTokens, 0);
  if (prompt === 0) return null;
  return {
    share: reported.reduce((sum, call) => sum + (call.reportedCachedTokens ?? 0), 0) / prompt,
    calls: reported.length,
  };
}

function CachedShare({ calls }: { calls: readonly ModelCallPointDto[] }) {
  const cached = cachedShare(calls);
  if (!cached) return null;
  return (
    <p className="figures" data-testid="cached-share">
      Provider prompt cache: {Math.round(cached.share * 1000) / 10}% of the prompt tokens of {cached.calls} calls shown
    </p>
  );
}

/** The newest calls, newest first: figures, and "What the model saw" for each call that produced an answer. */
function CallTable({ calls, onSee }: { calls: ModelCallPointDto[]; onSee(call: ModelCallPointDto): void }) {
  const newestFirst = [...calls].reverse().slice(0, 50);
  if (newestFirst.length === 0) return null;
  return (
    <div className="table-wrap">
      <table className="data" aria-label="Model calls">
        <thead>
          <tr>
            <th scope="col">When</th>
            <th scope="col">Purpose</th>
            <th scope="col" className="number">
              Prompt tokens
            </th>
            <th scope="col" className="number">
              Cached
            </th>
            <th scope="col" className="number">
              Transcript
            </th>
            <th scope="col" />
          </tr>
        </thead>
        <tbody>
          {newestFirst.map((call) => (
            <tr key={call.id}>
              <td>{relativeTime(call.at)}</td>
              <td>{call.purpose}</td>
              <td className="number" title={`our estimate ${call.estimatedPromptTokens}`}>
                {formatTokens(call.promptTokens)}
                {call.promptTokensSource === 'estimate' ? ' (estimate)' : ''}
              </td>
              <td className="number">
                {call.reportedCachedTokens !== null ? formatTokens(call.reportedCachedTokens) : '—'}
              </td>
              <td className="number">{formatTokens(call.transcriptTokens)}</td>
              <td>
                {call.messageId ? (
                  <button type="button" className="control" onClick={() => onSee(call)}>
                    What the model saw
                  </button>
                ) : null}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** The next pack's entries, as the model will get them. */
function PackPreview({ pack }: { pack: AdminThreadDetailDto['pack'] | null }) {
  if (!pack) return <p className="muted">Loading…</p>;
  return (
    <div className="pack-entries table-wrap">
      <table className="data">
        <thead>
          <tr>
            <th scope="col">#</th>
            <th scope="col">Role</th>
            <th scope="col">Content</th>
            <th scope="col" className="number">
              Tokens
            </th>
          </tr>
        </thead>
        <tbody>
          {pack.messages.map((entry, index) => (
            <tr key={index}>
              <td>{entry.seq ?? '—'}</td>
              <td>{entry.systemPrompt ? 'system prompt' : entry.role}</td>
              <td className="preview" title={entry.content}>
                {entry.content}
              </td>
              <td className="number">{entry.tokens}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** The thread's model calls (tokens chart, cache share, the newest calls and what the model saw), and the pack preview. */
export function ModelCallsCard(props: {
  threadId: string;
  calls: ModelCallPointDto[];
  olderCalls: string | null;
  onOlderCalls(cursor: string): void;
  pack: AdminThreadDetailDto['pack'] | null;
}) {
  const { threadId, calls, olderCalls } = props;
  const [seeing, setSeeing] = useState<ModelCallPointDto | null>(null);
  const seenMessageId = seeing?.messageId ?? null;
  const loadSeen = useCallback(
    () => requestJson<MessageContextDto>(`/api/admin/threads/${threadId}/messages/${seenMessageId}/context`),
    [threadId, seenMessageId],
  );
  return (
    <section className="card" aria-labelledby="chart-heading">
      <h2 id="chart-heading">Tokens per model call</h2>
      <TokensChart calls={calls} />
      <CachedShare calls={calls} />
      {olderCalls ? (
        <button type="button" onClick={() => props.onOlderCalls(olderCalls)}>
          Older calls
        </button>
      ) : null}
      <CallTable calls={calls} onSee={setSeeing} />
      {seeing?.messageId ? (
        <WhatTheModelSaw
          label={`the call of ${relativeTime(seeing.at)}`}
          load={loadSeen}
          onClose={() => setSeeing(null)}
        />
      ) : null}
      <h2>Pack preview</h2>
      <PackPreview pack={props.pack} />
    </section>
  );
}
