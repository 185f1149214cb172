import { useEffect, useState } from 'react';
import type { SpendUsageDto } from '../../../src/shared/api';
import { requestJson } from '../api/request-json';
import type { ChatSocket } from '../api/use-chat-socket';

/** An amount in the limit's unit: money with two decimals (four below 0.01), tokens grouped. */
function amount(value: number, unit: SpendUsageDto['unit']): string {
  if (unit === 'tokens') return `${Math.round(value).toLocaleString('en-US')} tokens`;
  return value !== 0 && Math.abs(value) < 0.01 ? value.toFixed(4) : value.toFixed(2);
}

/**
 * The quiet meter of the header (issue 35): once a spend limit applies to the user, what is used of it this period,
 * with what is left and when it resets on hover. Read on load and after each turn of the open thread; nothing at all
 * while no limit applies.
 */
export function SpendMeter({ token, socket }: { token: string | null; socket: ChatSocket | null }) {
  const [usage, setUsage] = useState<SpendUsageDto | null>(null);
  useEffect(() => {
    if (!token) return undefined;
    let live = true;
    const load = () => {
      requestJson<SpendUsageDto>('/api/me/usage', { token }).then(
        (read) => live && setUsage(read),
        // eslint-disable-next-line no-restricted-syntax -- the meter is a hint: a failed read keeps the last figures, the next turn's end reads again
        () => undefined,
      );
    };
    load();
    socket?.on('turn-end', load);
    return () => {
      live = false;
      socket?.off('turn-end', load);
    };
  }, [token, socket]);
  if (!usage || usage.limit === null) return null;
  const used = usage.spent + usage.reserved;
  const share = usage.limit > 0 ? Math.min(1, used / usage.limit) : 1;
  const resets = new Date(usage.resetsAt).toLocaleString();
  const left = `${amount(usage.remaining ?? 0, usage.unit)} left of ${amount(usage.limit, usage.unit)} this ${usage.period}; resets ${resets}`;
  return (
    <span
      className={`spend-meter${share >= 0.9 ? ' nearly-spent' : ''}`}
      role="meter"
      aria-label="Spend limit used"
      aria-valuemin={0}
      aria-valuemax={100}
      aria-valuenow={Math.round(share * 100)}
      aria-valuetext={left}
      title={left}
    >
      <span className="spend-meter-bar" style={{ width: `${Math.round(share * 100)}%` }} />
      <span className="spend-meter-text">{Math.round(share * 100)}% used</span>
    </span>
  );
}
