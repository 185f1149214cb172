import { useEffect, useMemo, useRef } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import type { ModelCallPointDto } from '../../../src/shared/api';
import { formatTokens } from '../common/format';

function cssVariable(name: string, fallback: string): string {
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim() || fallback;
}

/** The chart's options: the pack, the transcript and the tool definitions' band, in the page's colours. */
function chartOptions(chat: ModelCallPointDto[], width: number): uPlot.Options {
  const text = cssVariable('--text', '#1d2330');
  const grid = cssVariable('--border', '#d9dde5');
  const axis = { stroke: text, grid: { stroke: grid }, ticks: { stroke: grid } };
  return {
    width: Math.max(280, width),
    height: 280,
    scales: { x: { time: false } },
    legend: { live: false },
    axes: [
      { ...axis, label: 'model call' },
      { ...axis, label: 'tokens', size: 60 },
    ],
    series: [
      { label: 'call' },
      {
        label: 'Context pack tokens',
        stroke: cssVariable('--accent', '#2457c5'),
        width: 2,
        points: { show: chat.length < 60 },
      },
      {
        label: 'Transcript total tokens',
        stroke: cssVariable('--warn', '#9a6700'),
        width: 2,
        dash: [6, 4],
        points: { show: chat.length < 60 },
      },
      // The tool definitions' part of each prompt, its own band from the axis up: in a small window it is a
      // large share of the pack, which the pack line alone hides.
      {
        label: 'Tool definitions',
        stroke: cssVariable('--ok', '#1b7f3b'),
        fill: 'rgba(27, 127, 59, 0.18)',
        width: 1,
        points: { show: false },
      },
    ],
  };
}

/** The figures under the chart: the last call's prompt against the transcript, and how many were our estimate. */
function TokensCaption({ chat, last }: { chat: ModelCallPointDto[]; last: ModelCallPointDto }) {
  const estimated = chat.filter((call) => call.promptTokensSource === 'estimate').length;
  return (
    <figcaption className="figures">
      {chat.length} chat calls · last call: {formatTokens(last.promptTokens)} context tokens
      {last.promptTokensSource === 'estimate' ? ' (our estimate: not reported)' : ' (reported by the provider)'} vs{' '}
      {formatTokens(last.transcriptTokens)} transcript tokens
      {last.toolSchemaTokens !== null
        ? ` · tool definitions ${formatTokens(last.toolSchemaTokens)} of the last prompt`
        : ''}
      {estimated > 0 ? ` · ${estimated} of them not reported by the provider: our estimate shown` : ''}
    </figcaption>
  );
}

/**
 * Tokens per model call over the conversation: the prompt the model got (flat, thanks to the summary)
 * against the whole transcript (climbing), and the tool definitions' part of the prompt as a band of its own. Chat calls only. The prompt is the provider's figure where it reported
 * one; calls where it did not carry our estimate, marked in the caption.
 */
export function TokensChart({ calls }: { calls: ModelCallPointDto[] }) {
  const container = useRef<HTMLDivElement>(null);
  const chat = useMemo(() => calls.filter((call) => call.purpose === 'chat'), [calls]);
  useEffect(() => {
    const element = container.current;
    if (!element || chat.length === 0) return undefined;
    const data: uPlot.AlignedData = [
      chat.map((_, index) => index + 1),
      chat.map((call) => call.promptTokens),
      chat.map((call) => call.transcriptTokens),
      chat.map((call) => call.toolSchemaTokens),
    ];
    const plot = new uPlot(chartOptions(chat, element.clientWidth), data, element);
    const observer = new ResizeObserver(() => plot.setSize({ width: Math.max(280, element.clientWidth), height: 280 }));
    observer.observe(element);
    return () => {
      observer.disconnect();
      plot.destroy();
    };
  }, [chat]);
  const last = chat.at(-1);
  return (
    <figure className="chart-figure">
      {chat.length === 0 ? (
        <p className="muted">No model calls yet.</p>
      ) : (
        <div
          className="chart"
          ref={container}
          role="img"
          aria-label={`Tokens per model call: ${chat.length} calls; the last one sent ${last?.promptTokens ?? 0} tokens while the transcript held ${last?.transcriptTokens ?? 0}`}
        />
      )}
      {last ? <TokensCaption chat={chat} last={last} /> : null}
    </figure>
  );
}
