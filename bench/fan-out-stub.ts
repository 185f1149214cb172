/**
 * The fan-out benchmark's model stub, in a process of its own: it streams `chunks` deltas 20 ms apart, and that
 * cadence holds however busy the 1,000 tabs keep their process (as a model server's would), so frames per answer
 * depend on the server alone. Its URL is its first message to the parent; `{ type: 'exit' }` stops it.
 */
import { replyWithText, startOpenAIStub } from '../test/support/openai-stub';
import { fanOutChunks } from './support/fan-out-answer';

const chunks = fanOutChunks(Number(process.argv[2] ?? 40));
const stub = await startOpenAIStub({
  responder: () => replyWithText('', { chunks, chunkDelayMs: 20, omitUsage: true }),
  countPromptTokens: false,
});
process.send?.({ type: 'stub', url: stub.url });
process.on('message', (message: { type: 'exit' }) => {
  if (message.type === 'exit') void stub.close().then(() => process.exit(0));
});
