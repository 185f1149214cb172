import {
  replyWithText,
  startOpenAIStub,
  type OpenAIStub,
  type OpenAIStubOptions,
  type StubResponder,
} from '../../test/support/openai-stub';
import { classifyRequest } from '../../test/support/summary-stub';
import type { ApplicationOptions } from '../../src/app/compose';
import { startApp, type BenchApp, type Services } from './stack';
import { TurnProbe } from './turn-probe';

/** An instant model answer: one short chunk. */
export const instantReply: StubResponder = () =>
  replyWithText('Fine, thanks: the plan is on track.', { chunks: ['Fine, thanks: ', 'the plan is on track.'] });

export interface BenchStack {
  stub: OpenAIStub;
  app: BenchApp;
  probe: TurnProbe;
  stop(): Promise<void>;
}

/** The stub (answering instantly unless told otherwise), the whole app pointed at it, and a probe. */
export async function startBenchStack(
  services: Services,
  options: {
    env?: Record<string, string>;
    responder?: StubResponder;
    tuning?: ApplicationOptions['tuning'];
    /** The stub's other options (e.g. `countPromptTokens: false`: its token counting then costs this process nothing). */
    stub?: Pick<OpenAIStubOptions, 'countPromptTokens'>;
  } = {},
): Promise<BenchStack> {
  let probe: TurnProbe | null = null;
  const stub = await startOpenAIStub({
    classifyRequest,
    responder: options.responder ?? instantReply,
    maxContextTokens: 1_000_000,
    onRequest: (request) => probe?.onModelRequest(request),
    ...options.stub,
  });
  const app = await startApp(services, {
    env: { OPENAI_BASE_URL: stub.url, OPENAI_API_KEY: 'bench-key', CHAT_MODEL: 'gpt-4o-mini', ...options.env },
    ...(options.tuning ? { tuning: options.tuning } : {}),
  });
  probe = new TurnProbe(app);
  return {
    stub,
    app,
    probe,
    async stop() {
      await app.stop();
      await stub.close();
    },
  };
}
