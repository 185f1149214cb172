import { startBenchStack } from './support/bench-stack';
import type { Services } from './support/stack';
import { distribution, type Distribution } from './support/stats';

export interface FacadeHistoryResult {
  short: Distribution;
  long: Distribution;
  /** Messages in each history at the first measured turn. */
  shortMessages: number;
  longMessages: number;
}

interface WireMessage {
  role: 'user' | 'assistant';
  content: string;
}

/**
 * One `/v1/chat/completions` turn's server time (request sent → whole JSON answer back, the stub answering at once)
 * with a long client history against a short one, turns alternating between the two conversations so both see the
 * same machine noise. Both conversations are built through the route itself, as a client builds them (each request
 * resends the whole history plus one new message), so the transcript holds what the client sent and the server
 * matches it by its fingerprints. Parsing the client's history is linear in its length and allowed; reading the
 * transcript is not (issue 37 item 3: rows read per request independent of the history's length).
 */
export async function measureFacadeHistory(
  services: Services,
  options: { longMessages: number; shortMessages: number; turns: number; warmup: number },
): Promise<FacadeHistoryResult> {
  // A small window, so folds keep the pack (and its building) the same size in both conversations.
  const stack = await startBenchStack(services, {
    env: { CONTEXT_MAX_INPUT_TOKENS: '8000' },
    stub: { countPromptTokens: false },
  });
  try {
    const token = await stack.probe.guest();
    const send = async (key: string, history: WireMessage[], content: string): Promise<number> => {
      const messages = [...history, { role: 'user' as const, content }];
      const startedAt = performance.now();
      const response = await fetch(`${stack.app.baseUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', 'X-Thread-Id': key },
        body: JSON.stringify({ model: 'gpt-4o-mini', messages }),
      });
      const body = (await response.json()) as { choices?: { message: { content: string } }[] };
      const elapsed = performance.now() - startedAt;
      const answer = body.choices?.[0]?.message.content;
      if (response.status !== 200 || answer === undefined)
        throw new Error(`/v1 turn failed: ${response.status} ${JSON.stringify(body).slice(0, 300)}`);
      history.push({ role: 'user', content }, { role: 'assistant', content: answer });
      return elapsed;
    };
    const line = (index: number) =>
      `Message ${index}: we discussed the rollout of CODE-${index} and what the team should check before Friday.`;
    const short: WireMessage[] = [];
    const long: WireMessage[] = [];
    while (short.length < options.shortMessages) await send('bench-short', short, line(short.length));
    while (long.length < options.longMessages) await send('bench-long', long, line(long.length));
    const shortMessages = short.length;
    const longMessages = long.length;

    const shortTimes: number[] = [];
    const longTimes: number[] = [];
    for (let turn = 0; turn < options.warmup + options.turns; turn += 1) {
      const first = turn % 2 === 0;
      const a = await send(first ? 'bench-short' : 'bench-long', first ? short : long, line(turn));
      const b = await send(first ? 'bench-long' : 'bench-short', first ? long : short, line(turn));
      if (turn < options.warmup) continue;
      (first ? shortTimes : longTimes).push(a);
      (first ? longTimes : shortTimes).push(b);
    }
    return { short: distribution(shortTimes), long: distribution(longTimes), shortMessages, longMessages };
  } finally {
    await stack.stop();
  }
}
