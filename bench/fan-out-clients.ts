/**
 * The fan-out benchmark's clients and model stub, in their own process (so the parent's CPU time is the server's
 * alone): `tabs` real socket.io-client connections of one user joined to one thread, recording when each delta
 * arrives. The stub streams `chunks` deltas 20 ms apart; its URL is the first message to the parent.
 */
import { io as connect, type Socket } from 'socket.io-client';
import { replyWithText, startOpenAIStub } from '../test/support/openai-stub';

interface Start {
  type: 'start';
  baseUrl: string;
  token: string;
  threadId: string;
  tabs: number;
}

const chunkCount = Number(process.argv[2] ?? 40);
const chunks = Array.from({ length: chunkCount }, (_, index) => `part ${index} `);
const stub = await startOpenAIStub({ responder: () => replyWithText('', { chunks, chunkDelayMs: 20, omitUsage: true }), countPromptTokens: false });
process.send?.({ type: 'stub', url: stub.url });

const now = () => performance.timeOrigin + performance.now();
const sockets: Socket[] = [];
/** `${messageId}:${offset}` -> arrival times, one per tab. */
const arrivals = new Map<string, number[]>();
let delivered = 0;

async function open(options: Start): Promise<void> {
  for (let index = 0; index < options.tabs; index += 1) {
    const socket = connect(options.baseUrl, { auth: { token: options.token }, transports: ['websocket'], reconnection: false, forceNew: true });
    socket.on('message-delta', (payload: { messageId: string; offset: number }) => {
      const at = now();
      const key = `${payload.messageId}:${payload.offset}`;
      const list = arrivals.get(key) ?? [];
      list.push(at);
      arrivals.set(key, list);
      delivered += 1;
    });
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', () => resolve());
      socket.once('connect_error', reject);
    });
    await new Promise<void>((resolve, reject) => {
      socket.emit('thread-join', { threadId: options.threadId }, (ack: { ok: boolean }) => (ack.ok ? resolve() : reject(new Error('join refused'))));
    });
    sockets.push(socket);
  }
}

process.on('message', (message: Start | { type: 'collect' } | { type: 'clear' } | { type: 'exit' }) => {
  if (message.type === 'start') {
    open(message).then(() => process.send?.({ type: 'ready' }), (error: unknown) => process.send?.({ type: 'error', message: String(error) }));
  } else if (message.type === 'clear') {
    arrivals.clear();
    delivered = 0;
    process.send?.({ type: 'cleared' });
  } else if (message.type === 'collect') {
    process.send?.({ type: 'arrivals', delivered, arrivals: [...arrivals.values()] });
  } else {
    for (const socket of sockets) socket.disconnect();
    void stub.close().then(() => process.exit(0));
  }
});
