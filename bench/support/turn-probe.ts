import type { IncomingMessage } from 'node:http';
import { lastUserText, type StubRequest } from '../../test/support/openai-stub';
import type { BenchApp } from './stack';
import { requestJson, sendStreaming, type StreamedTurn } from './sse-client';

/** One measured turn: times are `performance.now()` in this process (client, server and stub share it). */
export interface TurnSample {
  benchId: string;
  /** Server: the request's headers parsed. */
  arrivedAt: number;
  /** Stub: the model request arrived. */
  modelRequestAt: number;
  /** Stub: the last byte of the answer was written. */
  modelDoneAt: number;
  /** Client: `message-end` seen on the stream. */
  messageEndAt: number;
  /** Client: `turn-end` seen on the stream. */
  turnEndAt: number;
  sentAt: number;
  promptTokens: number;
  /** Pre-model overhead: request arriving -> model request arriving at the stub. */
  pre: number;
  /** Post-model overhead: the stub's last byte -> `message-end` at the client. */
  post: number;
  /** Client-side turn latency: send -> `turn-end`. */
  total: number;
}

const TAG = /\[b:([A-Za-z0-9-]+)\]/;

/**
 * Matches each turn's three vantage points: the app server's `request` event (tagged by `x-bench-id`), the
 * stub's record of the model request (tagged in the user message), and the client's SSE events.
 */
export class TurnProbe {
  private readonly arrivals = new Map<string, number>();
  private readonly modelRequests = new Map<string, StubRequest>();
  private sequence = 0;

  constructor(private readonly app: BenchApp) {
    app.application.server.prependListener('request', (request: IncomingMessage) => {
      const id = request.headers['x-bench-id'];
      if (typeof id === 'string') this.arrivals.set(id, performance.now());
    });
  }

  /** For the stub's `onRequest`: remembers the chat request of each tagged turn. */
  onModelRequest = (request: StubRequest): void => {
    if (request.kind !== 'chat') return;
    const tag = TAG.exec(lastUserText(request.body))?.[1];
    if (tag) this.modelRequests.set(tag, request);
  };

  async guest(): Promise<string> {
    const { body } = await requestJson<{ token: string }>({
      baseUrl: this.app.baseUrl,
      method: 'POST',
      path: '/api/auth/guest',
    });
    return body.token;
  }

  async thread(token: string, title = 'bench'): Promise<string> {
    const { body } = await requestJson<{ id: string }>({
      baseUrl: this.app.baseUrl,
      method: 'POST',
      path: '/api/threads',
      token,
      body: { title },
    });
    return body.id;
  }

  /** Sends one message on the thread over REST + SSE and returns the turn's timings. */
  async turn(input: { token: string; threadId: string; text?: string }): Promise<TurnSample> {
    const benchId = `t${(this.sequence += 1)}`;
    const content = `${input.text ?? 'Hello, how is the plan going?'} [b:${benchId}]`;
    const streamed = await sendStreaming({
      baseUrl: this.app.baseUrl,
      threadId: input.threadId,
      token: input.token,
      content,
      benchId,
    });
    return this.sample(benchId, streamed);
  }

  private sample(benchId: string, streamed: StreamedTurn): TurnSample {
    const at = (name: string) => streamed.events.find((event) => event.event === name)?.at;
    const turnEnd = streamed.events.find((event) => event.event === 'turn-end');
    const status = (turnEnd?.data as { status?: string } | undefined)?.status;
    const arrivedAt = this.arrivals.get(benchId);
    const model = this.modelRequests.get(benchId);
    const messageEndAt = at('message-end');
    if (
      streamed.status !== 200 ||
      status !== 'complete' ||
      arrivedAt === undefined ||
      !model ||
      model.arrivedAt === undefined ||
      model.finishedAt === undefined ||
      messageEndAt === undefined ||
      !turnEnd
    ) {
      throw new Error(
        `turn ${benchId} did not complete cleanly (HTTP ${streamed.status}, turn ${status ?? 'no turn-end'}, events ${streamed.events.map((event) => event.event).join(',')})`,
      );
    }
    this.arrivals.delete(benchId);
    this.modelRequests.delete(benchId);
    return {
      benchId,
      arrivedAt,
      modelRequestAt: model.arrivedAt,
      modelDoneAt: model.finishedAt,
      messageEndAt,
      turnEndAt: turnEnd.at,
      sentAt: streamed.sentAt,
      promptTokens: model.promptTokens,
      pre: model.arrivedAt - arrivedAt,
      post: messageEndAt - model.finishedAt,
      total: turnEnd.at - streamed.sentAt,
    };
  }
}
