/**
 * The fan-out benchmark's clients, in their own process (so the parent's CPU time is the server's alone): `tabs`
 * real socket.io-client connections of one user joined to one thread, recording when each `message-delta` frame
 * arrives and rebuilding each message's text from the frames with the client's offset rule, to compare with the
 * answer of `chunks` deltas that bench/fan-out-stub.ts streams.
 */
import { io as connect, type Socket } from 'socket.io-client';
import { applyMessageDelta } from '../src/shared/apply-message-delta';
import { fanOutChunks } from './support/fan-out-answer';

interface Start {
  type: 'start';
  baseUrl: string;
  token: string;
  threadId: string;
  tabs: number;
}

/** The answer's whole text: what every tab must have rebuilt from its frames. */
const answer = fanOutChunks(Number(process.argv[2] ?? 40)).join('');

const now = () => performance.timeOrigin + performance.now();
const sockets: Socket[] = [];
/** `${messageId}:${offset}` -> arrival times, one per tab. */
const arrivals = new Map<string, number[]>();
/** Per tab: each message's text rebuilt from `message-delta` frames alone (not from `message-end`). */
const texts: Map<string, string>[] = [];
let frames = 0;
let gaps = 0;

async function open(options: Start): Promise<void> {
  for (let index = 0; index < options.tabs; index += 1) {
    const socket = connect(options.baseUrl, {
      auth: { token: options.token },
      transports: ['websocket'],
      reconnection: false,
      forceNew: true,
    });
    const tabTexts = new Map<string, string>();
    texts.push(tabTexts);
    socket.on('message-delta', (payload: { messageId: string; offset: number; delta: string }) => {
      const at = now();
      const key = `${payload.messageId}:${payload.offset}`;
      const list = arrivals.get(key) ?? [];
      list.push(at);
      arrivals.set(key, list);
      frames += 1;
      const text = applyMessageDelta(tabTexts.get(payload.messageId) ?? '', payload);
      if (text === null) gaps += 1;
      else tabTexts.set(payload.messageId, text);
    });
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', () => resolve());
      socket.once('connect_error', reject);
    });
    await new Promise<void>((resolve, reject) => {
      socket.emit('thread-join', { threadId: options.threadId }, (ack: { ok: boolean }) =>
        ack.ok ? resolve() : reject(new Error('join refused')),
      );
    });
    sockets.push(socket);
  }
}

/** Tabs whose one message since the last `clear` has exactly the answer's text. */
function completeTabs(): number {
  return texts.filter((tabTexts) => tabTexts.size === 1 && [...tabTexts.values()][0] === answer).length;
}

process.on('message', (message: Start | { type: 'collect' } | { type: 'clear' } | { type: 'exit' }) => {
  if (message.type === 'start') {
    open(message).then(
      () => process.send?.({ type: 'ready' }),
      (error: unknown) => process.send?.({ type: 'error', message: String(error) }),
    );
  } else if (message.type === 'clear') {
    arrivals.clear();
    for (const tabTexts of texts) tabTexts.clear();
    frames = 0;
    gaps = 0;
    process.send?.({ type: 'cleared' });
  } else if (message.type === 'collect') {
    process.send?.({ type: 'arrivals', frames, gaps, completeTabs: completeTabs(), arrivals: [...arrivals.values()] });
  } else {
    for (const socket of sockets) socket.disconnect();
    process.exit(0);
  }
});
